/** `chatlog account add`: a login to the account screen and the hubs it may see. */
import type { Command } from 'commander';
import { type GlobalOptions, withRuntime } from './runtime.js';

export function registerAccountCommands(program: Command, globals: () => GlobalOptions): void {
  const account = program.command('account').description('logins to the account screen (/account)');
  account
    .command('add <email>')
    .description('create a login (or set a new password) and give it hubs; the password is asked for')
    .requiredOption('--hub <hubId...>', 'a hub the account may see (repeat for more)')
    .option('--password-stdin', 'read the password from stdin instead of asking')
    .action(async (email: string, options: { hub: string[]; passwordStdin?: boolean }) => {
      const { askNewPassword, readAllStdin } = await import('./password.js');
      const password = options.passwordStdin ? await readAllStdin() : await askNewPassword();
      await withRuntime(globals(), async ({ accounts }) => {
        const { created } = await accounts.add(email, options.hub, password);
        process.stderr.write(
          `chatlog: account ${email.trim().toLowerCase()} ${created ? 'created' : 'updated'} (hubs ${options.hub.join(', ')}); sign in at /account\n`,
        );
      });
    });
}
