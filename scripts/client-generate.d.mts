/** packages/client/src/generated.ts, as the generator writes it. */
export const GENERATED: string;
export function generate(): Promise<string>;
