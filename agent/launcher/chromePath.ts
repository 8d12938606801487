// The default browser: Debian's Chromium binary itself when it is installed. /usr/bin/chromium
// is Debian's wrapper script, which spends ~25 ms of every start in a shell (grep of
// /proc/cpuinfo, findmnt, sourcing /etc/chromium.d) and adds desktop flags a session does not want.
import fs from 'node:fs';

export const DEBIAN_CHROMIUM_BINARY = '/usr/lib/chromium/chromium';
export const DEBIAN_CHROMIUM_WRAPPER = '/usr/bin/chromium';

export function defaultChromePath(): string {
  try {
    fs.accessSync(DEBIAN_CHROMIUM_BINARY, fs.constants.X_OK);
    return DEBIAN_CHROMIUM_BINARY;
  } catch {
    return DEBIAN_CHROMIUM_WRAPPER;
  }
}
