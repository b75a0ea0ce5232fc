export const summary = 'run the local simulator of the due-diligence service';
export const help = 'ddsync simulator [--port 4010] [--seed N] [--suppliers N] [--plots N] [--faults PROFILE|JSON] [--time-scale X] ...\n(ddsync simulator --help lists every flag)';

export async function run(argv: string[]): Promise<number> {
  const { runSimulatorCli } = await import('../../simulator/cli.ts');
  return runSimulatorCli(argv);
}
