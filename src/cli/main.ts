/** The executable's entry (bin/chatlog imports it): run the command line, exit 1 on failure. */
import { main } from './program.js';

const code = await main(process.argv);
if (code !== 0) process.exitCode = code;
