export async function run(argv: string[]): Promise<number> {
  const { runSimulatorCli } = await import('../../simulator/cli.ts');
  return runSimulatorCli(argv);
}
