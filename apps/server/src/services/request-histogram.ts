/** One series (route, method, status) of the request-duration histogram. */
interface Series {
  labels: string;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

const escapeLabel = (value: string): string =>
  value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * The request-duration histogram, kept by hand rather than with prom-client: it is updated on
 * every partner request, and prom-client's labelled `observe` hashes its labels on every call,
 * which measured as about a sixth of fetch throughput. Here a request costs two map look-ups and a
 * short scan of the buckets; the text exposition is rendered only when /metrics is read.
 */
export class RequestHistogram {
  private readonly routes = new Map<string, Map<string, Series[]>>();

  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.routes.get(route);
    if (!byMethod) this.routes.set(route, (byMethod = new Map<string, Series[]>()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = []));
    let series = byStatus[status];
    if (!series) {
      series = {
        labels: `route="${escapeLabel(route)}",method="${escapeLabel(method)}",status="${status}"`,
        counts: new Float64Array(this.buckets.length + 1),
        sum: 0,
        count: 0,
      };
      byStatus[status] = series;
    }
    let bucket = 0;
    while (bucket < this.buckets.length && seconds > (this.buckets[bucket] as number)) bucket++;
    series.counts[bucket] = (series.counts[bucket] as number) + 1;
    series.sum += seconds;
    series.count++;
  }

  /** The Prometheus text exposition of every series. */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const byMethod of this.routes.values()) {
      for (const byStatus of byMethod.values()) {
        for (const series of byStatus) {
          if (!series) continue;
          let cumulative = 0;
          this.buckets.forEach((bound, i) => {
            cumulative += series.counts[i] as number;
            lines.push(`${this.name}_bucket{${series.labels},le="${bound}"} ${cumulative}`);
          });
          lines.push(`${this.name}_bucket{${series.labels},le="+Inf"} ${series.count}`);
          lines.push(`${this.name}_sum{${series.labels}} ${series.sum}`);
          lines.push(`${this.name}_count{${series.labels}} ${series.count}`);
        }
      }
    }
    return `${lines.join('\n')}\n`;
  }
}
