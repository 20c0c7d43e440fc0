/**
 * How long a test waits for a change to reach a running server. Placard serves a change within
 * about two refresh intervals (2 s by default) on an idle machine; a loaded one stretches that,
 * and a test's outcome must not depend on the machine's speed. This still fails a change that
 * never arrives, or arrives only on a restart.
 */
export const PROPAGATION_MS = 20_000;

/** Polls `check` every 50 ms until it holds; fails, naming `what`, once `within` ms have passed. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  within = PROPAGATION_MS,
): Promise<void> {
  const deadline = Date.now() + within;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${within / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
