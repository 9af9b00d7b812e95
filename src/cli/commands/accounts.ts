import { accountsHelp } from '../control-help.js';
import { controlFlagOptions, resolveControlContext } from '../control-options.js';
import { accountTable, printResult } from '../control-output.js';
import { UsageError } from '../errors.js';
import { parseFlags } from '../flags.js';
import type { CliIo } from '../io.js';
import { pick } from './http.js';

/**
 * accountsCommand is `tuna accounts create NAME | list | disable ID`: the edge's tenants, managed
 * with an admin API key through the control API (no `curl` to /v1/accounts needed).
 */
export async function accountsCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, controlFlagOptions, 'accounts');
  if (parsed.values.help === true) return (io.out(accountsHelp), 0);
  const [verb, target, ...extra] = parsed.positionals;
  if (verb === undefined) throw new UsageError('tuna accounts: a subcommand is required: create, list or disable (see tuna accounts --help)');
  if (extra.length > 0) throw new UsageError(`tuna accounts ${verb}: unexpected argument ${JSON.stringify(extra[0])}`);
  const controlValues = pick(parsed.values, Object.keys(controlFlagOptions));
  switch (verb) {
    case 'create': {
      if (target === undefined) throw new UsageError('tuna accounts create: the account name is required, e.g. tuna accounts create team-a');
      const ctx = await resolveControlContext(controlValues, io.env, 'accounts create');
      const { account } = await ctx.client.createAccount(target);
      printResult(io, ctx.isJson, account, () => accountTable([account]));
      if (!ctx.isJson) io.err(`next: give it a key, e.g. tuna keys create --account ${account.id} --scope reservations`);
      return 0;
    }
    case 'list': {
      if (target !== undefined) throw new UsageError(`tuna accounts list: unexpected argument ${JSON.stringify(target)}`);
      const ctx = await resolveControlContext(controlValues, io.env, 'accounts list');
      const { accounts } = await ctx.client.listAccounts();
      printResult(io, ctx.isJson, accounts, () => accountTable(accounts));
      return 0;
    }
    case 'disable': {
      if (target === undefined) throw new UsageError('tuna accounts disable: the account id is required (see tuna accounts list)');
      const ctx = await resolveControlContext(controlValues, io.env, 'accounts disable');
      const disabled = await ctx.client.disableAccount(target);
      printResult(io, ctx.isJson, disabled, () => accountTable([disabled.account]));
      if (!ctx.isJson) {
        io.err(`disabled account ${disabled.account.name}; ${disabled.revokedApiKeyIds.length} API key(s) and ${disabled.revokedTunnelKeyIds.length} tunnel key(s) revoked, its reservations stay held`);
      }
      return 0;
    }
    default:
      throw new UsageError(`tuna accounts: unknown subcommand ${JSON.stringify(verb)}; expected create, list or disable (see tuna accounts --help)`);
  }
}
