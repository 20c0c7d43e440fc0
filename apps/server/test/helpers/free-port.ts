/**
 * `freePort()`: a port nobody listens on now, for a process a test starts later. The crash and
 * cluster scripts pick their ports the same way, so there is one copy, in `scripts/event-load.mjs`:
 * it picks below the kernel's range for outgoing connections' own ports (32768 and up on Linux),
 * as a port `listen(0)` hands out comes from that range, and between the check and the later
 * listen an outgoing connection (to PostgreSQL, Redis, a server under test) could take it
 * ("Address already in use").
 */
export { freePort } from '../../../../scripts/event-load.mjs';
