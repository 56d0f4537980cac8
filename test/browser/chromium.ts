/** Debian's Chromium, headless, as the browser tests and the screenshots drive it (never a download). */
import fs from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHATLOG_CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
    headless: true,
  });
}
