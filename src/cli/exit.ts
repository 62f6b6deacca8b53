// Exit codes shared by every subcommand (DESIGN.md): 0 ok, 1 invalid input or config, 2 usage.
export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;

/** An error the CLI reports as one line on stderr and turns into an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_INVALID,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
