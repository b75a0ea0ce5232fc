import { Command, InvalidArgumentError, type ErrorOptions, type HelpContext } from 'commander';

/** A mistake in how a command was called: printed with the command's help, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  /** The command whose help goes with it; without one, the command that was running. */
  constructor(
    message: string,
    readonly command?: Command,
  ) {
    super(message);
  }
}

/**
 * commander's Command, with every mistake it finds thrown as a UsageError of the command it found it
 * in (its help is printed with it), and a flag given to the wrong subcommand named as such.
 */
export class CliCommand extends Command {
  override createCommand(name?: string): CliCommand {
    return new CliCommand(name);
  }

  override error(message: string, options?: ErrorOptions): never {
    throw new UsageError(this.rule(message.replace(/^error: /, ''), options?.code), this);
  }

  /**
   * commander's answer to a group called without its subcommand (or to `help` with an unknown one):
   * help as an error. Name what is missing.
   */
  override help(context?: HelpContext): never;
  override help(cb: (str: string) => string): never;
  override help(context?: HelpContext | ((str: string) => string)): never {
    if (typeof context === 'function' || !context?.error) return super.help(context as HelpContext);
    if (this.args.length > 0) throw new UsageError(this.notACommand(String(this.args.at(-1))), this);
    throw new UsageError(
      this.parent ? `a subcommand is required: ${oneOf(this.commands.map((c) => c.name()))}` : 'a command is required',
      this,
    );
  }

  private rule(message: string, code: string | undefined): string {
    // commander puts "option '--plots <N>' argument 'many' is invalid." before what a parser said;
    // ours (wholeNumber, decimal…) name the flag, the rule and the value already.
    if (code === 'commander.invalidArgument')
      return message.replace(/^(option|command-argument value) .* is invalid(?: for argument '[^']*')?\. /s, '');
    const command = code === 'commander.unknownCommand' ? /^unknown command '([^']*)'(.*)$/s.exec(message) : null;
    if (command) return `${this.notACommand(command[1]!)}${command[2]}`;
    const unknown = code === 'commander.unknownOption' ? /^unknown option '(--[^'=]+)/.exec(message)?.[1] : undefined;
    if (unknown) {
      // `submissions cancel --wait`: --wait is status's and retry's. A group's own mistake is looked up among its subcommands.
      const siblings = this.commands.length > 0 ? this.commands : (this.parent?.commands ?? []);
      const owners = siblings
        .filter((c) => c !== this && c.options.some((o) => o.long === unknown))
        .map((c) => c.name());
      if (owners.length > 0) return `${unknown} goes with ${oneOf(owners)} only`;
    }
    return message;
  }

  /** `unknown subcommand "remove": expected add, status or archive` (the root's list is its help). */
  private notACommand(name: string): string {
    return this.parent
      ? `unknown subcommand "${name}": expected ${oneOf(this.commands.map((c) => c.name()))}`
      : `unknown command "${name}"`;
  }
}

function oneOf(names: string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** A parser of whole-number flags for commander, naming the flag and the rule on a bad value. */
export function wholeNumber(flag: string, min = 1, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`${flag} must be a whole number from ${min} to ${max}, got "${value}"`);
    return n;
  };
}

/** A parser of decimal flags (e.g. 0.001) for commander, naming the flag and the rule on a bad value. */
export function decimal(flag: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`${flag} must be a number from ${min} to ${max}, got "${value}"`);
    return n;
  };
}
