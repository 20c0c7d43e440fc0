import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { closeOnSignals, startServer } from '../../server.js';
import { seedDemo, type DemoResult } from '../../services/demo.js';
import { seedDemoUsers, type DemoSignIn, type DemoSignIns } from '../../services/demo-users.js';
import { reportFailure, type OutputOptions } from '../output.js';

/** How to get an admin token when the one the first start printed is lost, as the README says. */
const ANOTHER_ADMIN_TOKEN =
  "The admin token was printed at this store's first start only; for another one, run:\n" +
  '  npm run -s placard -- tokens create --label my-laptop';

function demoBanner(url: string, apiKey: string, campaignId: number | undefined): string {
  const auth = `-H "Authorization: Bearer ${apiKey}"`;
  const body = JSON.stringify({
    campaignId: campaignId ?? 1,
    placement: 'header_banner',
    location: 'US',
    device: 'mobile',
  });
  return [
    '',
    `Placard is serving demo data at ${url}`,
    `Demo API key (partner "Demo Publisher"): ${apiKey}`,
    '',
    'Try it:',
    `  curl -s ${auth} "${url}/api/v1/campaigns/fetch?placement=header_banner&location=US&device=mobile&limit=3"`,
    `  curl -s ${auth} -H "Content-Type: application/json" -d '${body}' ${url}/api/v1/campaigns/impression`,
    `  curl -s ${auth} -H "Content-Type: application/json" -d '${body}' ${url}/api/v1/campaigns/click`,
    '',
  ].join('\n');
}

/** How to run the CLI on the same store, from a checkout, as `npm start` runs the server. */
const CLI = 'npm run -s placard --';

/**
 * Why the demo's key is not shown and how to get one. The key file is shared by every store this
 * data directory serves, so it can hold another store's key; this store's own was shown once, when
 * it was seeded, and only its digest is kept.
 */
export function demoKeyNotice(demo: DemoResult): string {
  const create = `${CLI} keys create --partner "Demo Publisher" (with this start's PLACARD_DATABASE_URL)`;
  const why =
    demo.keyProblem === 'unusable'
      ? `the key in ${demo.keyFile} is suspended or expired in this store`
      : demo.keyProblem === 'unknown'
        ? `the key in ${demo.keyFile} is not one this store knows: another store seeded the demo in this data ` +
          `directory since (the file holds that store's key), or the key was revoked. This store's demo key was ` +
          `shown once, when it was seeded`
        : `its key file ${demo.keyFile} is gone`;
  return `\nDemo data exists, but ${why}. For a new key, run: ${create}.\n`;
}

/** The demo users whose passwords in the file this store refuses, and how to set new ones. */
export function withheldSignInsNotice(demo: DemoSignIns): string {
  const what =
    demo.withheld.length > 0
      ? `the passwords in ${demo.file} for ${demo.withheld.join(', ')} do not sign in to this store ` +
        `(another store seeded the demo in this data directory since, or they were changed)`
      : `no demo user's password is in ${demo.file}`;
  return `Demo users: ${what}. Get a password-reset link with: ${CLI} users reset <e-mail address>\n`;
}

/** The dashboard's address and one ready sign-in for each kind of demo user. */
function dashboardBanner(url: string, signIns: DemoSignIn[]): string {
  const width = Math.max(...signIns.map((signIn) => signIn.email.length));
  return [
    `Dashboard: ${url}/ (sign in as any of these demo users)`,
    ...signIns.map(
      (signIn) => `  ${signIn.kind.padEnd(11)}${signIn.email.padEnd(width + 2)}${signIn.password}`,
    ),
    '',
  ].join('\n');
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP service (migrates the store first)')
    .option('--demo', 'seed the demo data set on first start and print a demo key with curl examples')
    .option('--json', 'print the startup summary as JSON')
    .action(async (options: OutputOptions & { demo?: boolean }) => {
      try {
        const config = loadConfig();
        let demo: DemoResult | undefined;
        let signIns: DemoSignIns | undefined;
        const server = await startServer(config, {
          beforeLoad: options.demo
            ? async (store) => {
                demo = await seedDemo(store, config.dataDir);
                signIns = await seedDemoUsers(store, config.dataDir);
              }
            : undefined,
        });
        closeOnSignals(server);
        const sample = server.state.index.select({
          placement: 'header_banner',
          limit: 1,
          location: 'US',
          device: 'mobile',
        });
        const adminToken = server.generatedAdminToken ?? null;
        if (options.json) {
          const summary = {
            url: server.url,
            store: server.store.engine,
            demoApiKey: demo?.apiKey ?? null,
            demoSignIns: signIns?.signIns ?? null,
            adminToken,
          };
          console.log(JSON.stringify(summary));
          return;
        }
        // Which tokens PLACARD_ADMIN_TOKEN registered are valid, where an operator starting it sees them.
        for (const notice of server.adminTokenNotices) console.log(notice.message);
        if (adminToken) {
          console.log(
            `\nAdmin token for ${server.url}/admin/v1 (shown once; store it now):\n  ${adminToken}`,
          );
        } else if (demo && server.adminTokenNotices.length === 0) {
          // A later demo start, whose reader may have lost the token the first one printed.
          console.log(`\n${ANOTHER_ADMIN_TOKEN}`);
        }
        // Only what this store accepts is shown (seedDemo, seedDemoUsers); the rest is named, with a way to a new one.
        if (demo?.apiKey) console.log(demoBanner(server.url, demo.apiKey, sample[0]?.id));
        else if (demo) console.log(demoKeyNotice(demo));
        if (signIns && signIns.signIns.length > 0) console.log(dashboardBanner(server.url, signIns.signIns));
        if (signIns && (signIns.withheld.length > 0 || signIns.signIns.length === 0)) {
          console.log(withheldSignInsNotice(signIns));
        }
      } catch (error) {
        reportFailure(options, error);
      }
    });
}
