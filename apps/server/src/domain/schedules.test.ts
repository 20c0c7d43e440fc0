import { describe, expect, it } from 'vitest';
import type { FieldProblem } from './errors.js';
import {
  nextRunAt,
  readSchedule,
  runsAt,
  scheduleFromText,
  scheduleText,
  WeekClock,
  type Schedule,
} from './schedules.js';
import { localHourOfWeek } from './time-zones.js';

const HOUR = 3_600_000;
const at = (iso: string): number => Date.parse(iso);

function read(value: unknown): { schedule: Schedule | null; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  return { schedule: readSchedule(value, 'schedule', problems), problems };
}

/** The UTC hours (as ISO strings) from `from` for `hours` hours in which `schedule` runs. */
function runningHours(schedule: Schedule, from: string, hours: number, timeZone: string): string[] {
  const start = at(from);
  return Array.from({ length: hours }, (_, i) => start + i * HOUR)
    .filter((ms) => runsAt(schedule, ms, timeZone) && runsAt(schedule, ms + HOUR - 1, timeZone))
    .map((ms) => new Date(ms).toISOString());
}

describe('reading a schedule', () => {
  it('takes null or nothing as every hour', () => {
    expect(read(null)).toEqual({ schedule: null, problems: [] });
    expect(read(undefined)).toEqual({ schedule: null, problems: [] });
  });

  it('normalises: days in week order, ranges sorted, overlapping and touching ones joined, empty days left out', () => {
    expect(
      read({
        sat: [[10, 14]],
        mon: [
          [13, 17],
          [9, 12],
          [12, 13],
          [20, 22],
        ],
        tue: [],
      }),
    ).toEqual({
      schedule: {
        mon: [
          [9, 17],
          [20, 22],
        ],
        sat: [[10, 14]],
      },
      problems: [],
    });
  });

  it('names each problem: the field, the day or the range at fault', () => {
    expect(read('9-17').problems).toEqual([
      {
        field: 'schedule',
        message: expect.stringContaining('must be null (every hour) or an object of weekdays'),
      },
    ]);
    expect(read({ monday: [[9, 17]] }).problems).toEqual([
      { field: 'schedule.monday', message: 'is not a weekday: use mon, tue, wed, thu, fri, sat, sun' },
    ]);
    expect(read({ mon: [9, 17] }).problems.map((p) => p.field)).toEqual([
      'schedule.mon[0]',
      'schedule.mon[1]',
    ]);
    expect(read({ mon: 'all day' }).problems).toEqual([
      { field: 'schedule.mon', message: 'must be a list of [from, to] hour ranges, such as [[9, 17]]' },
    ]);
    for (const range of [[17, 9], [9, 9], [-1, 3], [0, 25], [9.5, 17], [9], [9, 17, 18], ['9', '17']])
      expect(read({ fri: [[0, 1], range] }).problems).toEqual([
        { field: 'schedule.fri[1]', message: expect.stringContaining('0 <= from < to <= 24') },
      ]);
    expect(read({}).problems).toEqual([
      { field: 'schedule', message: 'must allow at least one hour (null runs at every hour)' },
    ]);
    expect(read({ sun: [] }).problems).toHaveLength(1);
  });
});

describe('running in the hours of the week', () => {
  const officeHours: Schedule = { mon: [[9, 17]], sat: [[10, 14]] };

  it('runs from the start of hour `from` to the start of hour `to`, in the campaign’s time zone', () => {
    // Monday 2026-06-01 in Paris is UTC+2.
    expect(runsAt(officeHours, at('2026-06-01T06:59:59Z'), 'Europe/Paris')).toBe(false);
    expect(runsAt(officeHours, at('2026-06-01T07:00:00Z'), 'Europe/Paris')).toBe(true);
    expect(runsAt(officeHours, at('2026-06-01T14:59:59Z'), 'Europe/Paris')).toBe(true);
    expect(runsAt(officeHours, at('2026-06-01T15:00:00Z'), 'Europe/Paris')).toBe(false);
    expect(runsAt(officeHours, at('2026-06-02T08:00:00Z'), 'Europe/Paris')).toBe(false);
    expect(runsAt(null, at('2026-06-02T08:00:00Z'), 'Europe/Paris')).toBe(true);
    // 24 is midnight at the day's end; Sunday is the week's last day.
    expect(runsAt({ sun: [[23, 24]] }, at('2026-06-07T23:30:00Z'), 'UTC')).toBe(true);
    expect(runsAt({ sun: [[23, 24]] }, at('2026-06-08T00:00:00Z'), 'UTC')).toBe(false);
  });

  it('knows when it next runs', () => {
    // Tuesday noon in Paris: next Saturday 10:00 local (08:00 UTC).
    expect(nextRunAt(officeHours, at('2026-06-02T10:00:00Z'), 'Europe/Paris')).toBe(
      at('2026-06-06T08:00:00Z'),
    );
    // In a time zone a quarter hour off the hour, the local hour starts on the quarter.
    expect(nextRunAt({ mon: [[9, 10]] }, at('2026-06-01T00:00:00Z'), 'Asia/Kathmandu')).toBe(
      at('2026-06-01T03:15:00Z'),
    );
  });

  // Europe/Berlin: 2026-03-29 02:00 CET jumps to 03:00 CEST; 2026-10-25 03:00 CEST falls back to 02:00 CET.
  describe('across daylight saving in Europe/Berlin', () => {
    const twoOnSunday: Schedule = { sun: [[2, 3]] };

    it('skips an hour that does not exist', () => {
      expect(runningHours(twoOnSunday, '2026-03-28T20:00:00Z', 12, 'Europe/Berlin')).toEqual([]);
      // So it next runs a week later, 02:00 CEST (00:00 UTC).
      expect(nextRunAt(twoOnSunday, at('2026-03-28T20:00:00Z'), 'Europe/Berlin')).toBe(
        at('2026-04-05T00:00:00Z'),
      );
      // The hours around the gap run as usual.
      expect(runningHours({ sun: [[1, 4]] }, '2026-03-28T20:00:00Z', 12, 'Europe/Berlin')).toEqual([
        '2026-03-29T00:00:00.000Z', // 01:00 CET
        '2026-03-29T01:00:00.000Z', // 03:00 CEST
      ]);
    });

    it('runs a repeated hour both times', () => {
      expect(runningHours(twoOnSunday, '2026-10-24T20:00:00Z', 12, 'Europe/Berlin')).toEqual([
        '2026-10-25T00:00:00.000Z', // 02:00 CEST
        '2026-10-25T01:00:00.000Z', // 02:00 CET
      ]);
    });
  });

  // America/New_York: 2026-03-08 02:00 EST jumps to 03:00 EDT; 2026-11-01 02:00 EDT falls back to 01:00 EST.
  describe('across daylight saving in America/New_York', () => {
    it('skips an hour that does not exist', () => {
      expect(runningHours({ sun: [[2, 3]] }, '2026-03-08T00:00:00Z', 24, 'America/New_York')).toEqual([]);
      expect(runningHours({ sun: [[1, 4]] }, '2026-03-08T00:00:00Z', 24, 'America/New_York')).toEqual([
        '2026-03-08T06:00:00.000Z', // 01:00 EST
        '2026-03-08T07:00:00.000Z', // 03:00 EDT
      ]);
    });

    it('runs a repeated hour both times', () => {
      expect(runningHours({ sun: [[1, 2]] }, '2026-11-01T00:00:00Z', 24, 'America/New_York')).toEqual([
        '2026-11-01T05:00:00.000Z', // 01:00 EDT
        '2026-11-01T06:00:00.000Z', // 01:00 EST
      ]);
    });
  });

  it('a zone’s clock, worked out once a quarter hour, agrees with the time-zone maths at every minute', () => {
    for (const timeZone of ['Europe/Berlin', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe']) {
      const clock = new WeekClock(timeZone);
      for (const day of ['2026-03-07', '2026-03-28', '2026-04-04', '2026-10-03', '2026-10-24', '2026-10-31'])
        for (let ms = at(`${day}T00:00:00Z`); ms < at(`${day}T00:00:00Z`) + 48 * HOUR; ms += 60_000)
          expect(clock.hourOfWeek(ms)).toBe(localHourOfWeek(ms, timeZone));
    }
  });
});

describe('a schedule in words', () => {
  it('reads days and hours as typed on the command line, and writes them back the same way', () => {
    const typed = scheduleFromText('mon-fri 9-17; sat 10-14,18-22');
    expect(typed).toEqual({
      mon: [[9, 17]],
      tue: [[9, 17]],
      wed: [[9, 17]],
      thu: [[9, 17]],
      fri: [[9, 17]],
      sat: [
        [10, 14],
        [18, 22],
      ],
    });
    const { schedule } = read(typed);
    expect(scheduleText(schedule)).toBe('mon-fri 9-17; sat 10-14,18-22');
    expect(scheduleText({ mon: [[9, 17]], wed: [[9, 17]] })).toBe('mon 9-17; wed 9-17');
    expect(scheduleText(null)).toBe('every hour');
    expect(scheduleFromText('')).toBeNull();
    expect(scheduleFromText('always')).toBeNull();
    expect(() => scheduleFromText('weekdays 9-17')).toThrow('cannot read "weekdays 9-17"');
    expect(() => scheduleFromText('fri-mon 9-17')).toThrow('cannot read');
    expect(() => scheduleFromText('mon nine-five')).toThrow('cannot read');
  });
});
