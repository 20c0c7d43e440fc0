import { describe, expect, it } from 'vitest';
import { renderTable } from './table.js';

describe('renderTable', () => {
  it('aligns columns two spaces apart, without trailing spaces', () => {
    expect(
      renderTable(
        ['ID', 'NAME'],
        [
          ['1', 'Daily Planet'],
          ['12', '-'],
        ],
      ),
    ).toBe('ID  NAME\n1   Daily Planet\n12  -\n');
  });

  it('right-aligns the columns asked for, with rules and a footer', () => {
    const table = renderTable(
      ['period', 'impressions'],
      [
        ['2026-11-22', '3'],
        ['2026-11-23', '12'],
      ],
      { alignRight: (i) => i === 1, rules: true, footer: ['total', '15'] },
    );
    expect(table).toBe(
      [
        'period      impressions',
        '----------  -----------',
        '2026-11-22            3',
        '2026-11-23           12',
        '----------  -----------',
        'total                15',
        '',
      ].join('\n'),
    );
  });
});
