// Places where snow and landscaping crews work, with real city-centre coordinates, and the local
// shape of a street address, postal code and phone number. Coordinates are integer microdegrees so
// the numeric(9,6) columns get exact decimal strings, never a float's rounding.
import type { Rng } from './prng.ts';

export type Country = 'US' | 'CA' | 'DE' | 'AT' | 'FI' | 'NL';

export interface City {
  name: string;
  region: string;
  /** microdegrees */
  lat: number;
  lon: number;
  /** leading part of the local postal code (ZIP prefix, FSA letter, PLZ prefix) */
  postal: string;
  /** area code used for landlines */
  area: string;
}

export const CURRENCY_BY_COUNTRY: Record<Country, string> = {
  US: 'USD',
  CA: 'CAD',
  DE: 'EUR',
  AT: 'EUR',
  FI: 'EUR',
  NL: 'EUR',
};

const c = (name: string, region: string, lat: number, lon: number, postal: string, area: string) =>
  ({ name, region, lat: Math.round(lat * 1e6), lon: Math.round(lon * 1e6), postal, area }) as City;

export const CITIES: Record<Country, readonly City[]> = {
  US: [
    c('Minneapolis', 'MN', 44.977753, -93.265015, '554', '612'),
    c('Chicago', 'IL', 41.878113, -87.629799, '606', '312'),
    c('Boston', 'MA', 42.360081, -71.058884, '021', '617'),
    c('Denver', 'CO', 39.739235, -104.99025, '802', '303'),
    c('Buffalo', 'NY', 42.886448, -78.878372, '142', '716'),
    c('Detroit', 'MI', 42.331429, -83.045753, '482', '313'),
    c('Milwaukee', 'WI', 43.038902, -87.906471, '532', '414'),
    c('Salt Lake City', 'UT', 40.76078, -111.891045, '841', '801'),
  ],
  CA: [
    c('Toronto', 'ON', 43.653226, -79.383184, 'M', '416'),
    c('Montréal', 'QC', 45.501689, -73.567256, 'H', '514'),
    c('Ottawa', 'ON', 45.42153, -75.697193, 'K', '613'),
    c('Calgary', 'AB', 51.044733, -114.071883, 'T', '403'),
    c('Winnipeg', 'MB', 49.895136, -97.138374, 'R', '204'),
    c('Québec', 'QC', 46.813878, -71.207981, 'G', '418'),
  ],
  DE: [
    c('München', 'Bayern', 48.137154, 11.576124, '80', '89'),
    c('Garmisch-Partenkirchen', 'Bayern', 47.491977, 11.095534, '82', '8821'),
    c('Berlin', 'Berlin', 52.520008, 13.404954, '10', '30'),
  ],
  AT: [
    c('Innsbruck', 'Tirol', 47.269212, 11.404102, '60', '512'),
    c('Salzburg', 'Salzburg', 47.80949, 13.05501, '50', '662'),
    c('Wien', 'Wien', 48.208174, 16.373819, '1', '1'),
  ],
  FI: [
    c('Helsinki', 'Uusimaa', 60.169856, 24.938379, '00', '9'),
    c('Oulu', 'Pohjois-Pohjanmaa', 65.012093, 25.465076, '90', '8'),
    c('Tampere', 'Pirkanmaa', 61.497752, 23.760954, '33', '3'),
  ],
  NL: [
    c('Amsterdam', 'Noord-Holland', 52.367573, 4.904139, '10', '20'),
    c('Utrecht', 'Utrecht', 52.090737, 5.12142, '35', '30'),
  ],
};

const digits = (rng: Rng, n: number) => {
  let s = '';
  for (let i = 0; i < n; i++) s += String(rng.int(0, 9));
  return s;
};
const letter = (rng: Rng) => String.fromCharCode(65 + rng.int(0, 25));

export function postalCode(rng: Rng, country: Country, city: City): string {
  switch (country) {
    case 'US':
      return city.postal + digits(rng, 2);
    case 'CA':
      return `${city.postal}${rng.int(1, 9)}${letter(rng)} ${rng.int(0, 9)}${letter(rng)}${rng.int(0, 9)}`;
    case 'DE':
    case 'FI':
      return city.postal + digits(rng, 3);
    case 'AT':
      return (city.postal + digits(rng, 3)).slice(0, 4);
    case 'NL':
      return `${city.postal}${digits(rng, 2)} ${letter(rng)}${letter(rng)}`;
  }
}

/** Phone numbers in the fictional ranges where one exists (North America's 555-01xx). */
export function phoneNumber(rng: Rng, country: Country, city: City, mobile: boolean): string {
  switch (country) {
    case 'US':
    case 'CA':
      return `+1 ${city.area}-555-01${digits(rng, 2)}`;
    case 'DE':
      return mobile ? `+49 151 ${digits(rng, 8)}` : `+49 ${city.area} ${digits(rng, 6)}`;
    case 'AT':
      return mobile ? `+43 664 ${digits(rng, 7)}` : `+43 ${city.area} ${digits(rng, 6)}`;
    case 'FI':
      return mobile ? `+358 40 ${digits(rng, 7)}` : `+358 ${city.area} ${digits(rng, 7)}`;
    case 'NL':
      return mobile ? `+31 6 ${digits(rng, 8)}` : `+31 ${city.area} ${digits(rng, 7)}`;
  }
}

/** Microdegrees → the exact numeric(9,6) text, e.g. -93265015 → "-93.265015". */
export function formatMicrodegrees(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro);
  return `${sign}${Math.floor(abs / 1e6)}.${String(abs % 1e6).padStart(6, '0')}`;
}
