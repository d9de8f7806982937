// The headless Chromium the browser tests drive through playwright-core: its binary
// ($CHROMIUM, else /usr/bin/chromium) and the flags every such test passes.
import { existsSync } from "node:fs";

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/** Flags that keep the browser quiet (no traffic of its own, no first-run UI) and let it start as root. */
export const QUIET = [
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // Chromium's sandbox refuses to start as root.
  ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
];
