import { expect } from 'chai';
import { userDirectory } from '../../src/cli/io.js';

describe('userDirectory: where relative paths resolve', () => {
  const npmRun = (script: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    INIT_CWD: '/home/me/project',
    npm_package_name: 'tuna',
    npm_package_json: '/src/tuna/package.json',
    npm_lifecycle_event: script,
    ...extra,
  });

  const cases: [string, NodeJS.ProcessEnv, string, string][] = [
    ['a plain shell: the working directory', {}, '/home/me', '/home/me'],
    ['npm run tuna: the directory npm was run in (INIT_CWD)', npmRun('tuna'), '/src/tuna', '/home/me/project'],
    ['npm run demo: likewise', npmRun('demo'), '/src/tuna', '/home/me/project'],
    ['another script of this package (npm test starting tuna): the working directory', npmRun('test'), '/src/tuna', '/src/tuna'],
    ["another package's script: the working directory", npmRun('tuna', { npm_package_name: 'my-app', npm_package_json: '/home/me/project/package.json' }), '/home/me/project/sub', '/home/me/project/sub'],
    ['a script that changed directory first: the working directory', npmRun('tuna'), '/src/tuna/examples', '/src/tuna/examples'],
    ['npm without INIT_CWD: the working directory', npmRun('tuna', { INIT_CWD: '' }), '/src/tuna', '/src/tuna'],
  ];
  for (const [title, env, cwd, want] of cases) it(title, () => expect(userDirectory(env, cwd)).to.equal(want));
});
