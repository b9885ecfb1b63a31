// Consumable materials (de-icing, traction, landscaping) and the unit they are billed by.
import type { LineOfBusiness } from './service-templates.ts';

export interface ConsumableTemplate {
  name: string;
  operators: string;
  group: string;
  line: LineOfBusiness;
  /** client rate range in whole units per unit of measure */
  rate: readonly [number, number];
  unit: string;
}

export const CONSUMABLE_TEMPLATES: readonly ConsumableTemplate[] = [
  { name: 'Rock salt', operators: 'Salt', group: 'de_icing', line: 'snow', rate: [95, 180], unit: 'tonne' },
  {
    name: 'Treated salt',
    operators: 'Treated',
    group: 'de_icing',
    line: 'snow',
    rate: [130, 240],
    unit: 'tonne',
  },
  { name: 'Winter sand', operators: 'Sand', group: 'traction', line: 'snow', rate: [25, 60], unit: 'tonne' },
  {
    name: 'Sand/salt mix',
    operators: 'Mix',
    group: 'traction',
    line: 'snow',
    rate: [50, 110],
    unit: 'tonne',
  },
  { name: 'Liquid brine', operators: 'Brine', group: 'de_icing', line: 'snow', rate: [1, 3], unit: 'litre' },
  {
    name: 'Calcium chloride',
    operators: 'CaCl',
    group: 'de_icing',
    line: 'snow',
    rate: [18, 35],
    unit: '25 kg bag',
  },
  {
    name: 'Magnesium chloride',
    operators: 'MgCl',
    group: 'de_icing',
    line: 'snow',
    rate: [20, 38],
    unit: '25 kg bag',
  },
  {
    name: 'Pet-safe ice melt',
    operators: 'Ice melt',
    group: 'de_icing',
    line: 'snow',
    rate: [22, 45],
    unit: '20 kg bag',
  },
  {
    name: 'Hardwood mulch',
    operators: 'Mulch',
    group: 'landscaping',
    line: 'landscaping',
    rate: [35, 70],
    unit: 'cubic metre',
  },
  {
    name: 'Screened topsoil',
    operators: 'Topsoil',
    group: 'landscaping',
    line: 'landscaping',
    rate: [30, 65],
    unit: 'cubic metre',
  },
  {
    name: 'Grass seed mix',
    operators: 'Seed',
    group: 'turf_care',
    line: 'landscaping',
    rate: [60, 140],
    unit: '20 kg bag',
  },
  {
    name: 'Slow-release fertilizer',
    operators: 'Fert',
    group: 'turf_care',
    line: 'landscaping',
    rate: [40, 90],
    unit: '22 kg bag',
  },
  {
    name: 'River rock',
    operators: 'Rock',
    group: 'hardscape',
    line: 'landscaping',
    rate: [80, 160],
    unit: 'tonne',
  },
  {
    name: 'Annual flowers',
    operators: 'Annuals',
    group: 'plants',
    line: 'landscaping',
    rate: [3, 8],
    unit: 'plant',
  },
];
