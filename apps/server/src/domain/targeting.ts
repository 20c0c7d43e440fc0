import { invalid } from './errors.js';

/** ISO 3166-1 alpha-2: the 249 officially assigned codes, plus XK (Kosovo), per rule D2. */
export const COUNTRY_CODES: ReadonlySet<string> = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV ' +
    'BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ' +
    'ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE ' +
    'IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY ' +
    'MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU ' +
    'NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM ' +
    'SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE ' +
    'VG VI VN VU WF WS YE YT ZA ZM ZW XK'
  ).split(' '),
);

export const DEVICES = ['mobile', 'desktop', 'tablet'] as const;
export type Device = (typeof DEVICES)[number];

export const LOCATION_MESSAGE = 'location must be an ISO 3166-1 alpha-2 country code';
export const DEVICE_MESSAGE = 'device must be one of: mobile, desktop, tablet';

/** Normalises a country code to upper case, or throws the D2 message. */
export function parseLocation(value: unknown): string {
  if (typeof value !== 'string') throw invalid(LOCATION_MESSAGE);
  const code = value.toUpperCase();
  if (!COUNTRY_CODES.has(code)) throw invalid(LOCATION_MESSAGE);
  return code;
}

/** Normalises a device type to lower case, or throws the D2 message. */
export function parseDevice(value: unknown): Device {
  if (typeof value !== 'string') throw invalid(DEVICE_MESSAGE);
  const lower = value.toLowerCase();
  // The constant itself, not the lower-cased copy: it is used as a property key on every fetch.
  const device = DEVICES.find((known) => known === lower);
  if (device === undefined) throw invalid(DEVICE_MESSAGE);
  return device;
}
