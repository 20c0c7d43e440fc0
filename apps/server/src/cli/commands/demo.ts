import type { Command } from 'commander';
import { seedDemo } from '../../services/demo.js';
import { storeAction } from '../context.js';
import { emit, type OutputOptions } from '../output.js';
import { demoKeyNotice } from './serve.js';

export function registerDemo(program: Command): void {
  storeAction(
    program.command('demo').description('seed the demo data set (once per store) and print the demo API key'),
    async ({ store, config }, options: OutputOptions) => {
      const result = await seedDemo(store, config.dataDir);
      emit(options, result, () => {
        console.log(result.created ? 'seeded the demo data set' : 'the demo data set already exists');
        // Only a key this store accepts; otherwise why not, and how to make one (as `serve --demo` says).
        console.log(result.apiKey ? `demo API key: ${result.apiKey}` : demoKeyNotice(result).trim());
      });
    },
    { create: true },
  );
}
