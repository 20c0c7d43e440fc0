import { Fragment } from 'preact';
import type { ServiceHealth } from '../../operations.js';
import { Layout, type PageContext } from './layout.js';

/** Seconds as people say them: `3 d 4 h`, `2 h 5 min`, `40 s`. */
export function duration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** What each readiness check looks at, in words. */
const CHECKS: Record<string, string> = {
  shutdown: 'Not shutting down',
  store: 'Store reachable and storing events',
  migrations: 'Database migrations applied',
  rateLimits: 'Rate limits',
};

const SUMMARY: Record<ServiceHealth['readiness']['status'], string> = {
  ready: 'Ready: this instance serves partners and stores their events.',
  degraded: 'Degraded: this instance serves, with rate limits kept per instance.',
  'not ready': 'Not ready: load balancers stop sending requests to this instance until it is.',
};

/** The service's health for the operator: readiness as `/readyz` computes it, and a few figures. */
export function HealthPage(props: { page: PageContext; health: ServiceHealth }) {
  const { health } = props;
  const { readiness } = health;
  const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
  return (
    <Layout title="Health" page={props.page} current="/health">
      <p class={`health health-${readiness.status.replace(' ', '-')}`} role="status">
        {SUMMARY[readiness.status]}
      </p>
      <h2 class="section-title">Readiness checks</h2>
      <dl>
        {Object.entries(readiness.checks).map(([name, answer]) => (
          <Fragment key={name}>
            <dt>{CHECKS[name] ?? name}</dt>
            <dd>
              <span class={`status ${name === readiness.failing ? 'status-failing' : ''}`}>{answer}</span>
            </dd>
          </Fragment>
        ))}
      </dl>
      <h2 class="section-title">This instance</h2>
      <dl>
        <dt>Version</dt>
        <dd>{health.version}</dd>
        <dt>Up for</dt>
        <dd>{duration(health.uptimeSeconds)}</dd>
        <dt>Store</dt>
        <dd>
          {health.engine}, <code>{health.storeLocation}</code>
        </dd>
        <dt>Events waiting to be stored</dt>
        <dd>{health.eventQueue ?? '—'}</dd>
        <dt>Serving index</dt>
        <dd>
          {health.indexCampaigns} running campaigns, checked {duration(health.indexRefreshAgeMs / 1000)} ago
        </dd>
        <dt>Memory</dt>
        <dd>{mb(health.memoryBytes)}</dd>
      </dl>
      <p class="hint">
        Monitoring reads the same from <code>/readyz</code> (details with an admin token) and{' '}
        <code>/metrics</code>. Each instance answers for itself: behind a load balancer, this page shows the
        one that served it.
      </p>
    </Layout>
  );
}
