/** Placeholder: the command is being built (issue 21). */
export async function run(_o: { json?: boolean }): Promise<number> {
  process.stderr.write('ddsync dbt: not built yet\n');
  return 1;
}
