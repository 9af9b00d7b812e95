/**
 * attack prints one line of what an attack of the security suite (test/security) did and what it
 * saw, under the running test's title: `attack: <what> → <figures>`. docs/security.md lists them.
 */
export function attack(line: string): void {
  console.log(`      attack: ${line}`);
}
