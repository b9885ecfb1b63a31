// What snow-and-ice and landscaping companies actually sell and own. Rates are in whole units of
// the company's currency; the generator varies them per company.

export type LineOfBusiness = 'snow' | 'landscaping';

export type ChargeType = 'hourly' | 'per_visit' | 'per_push' | 'seasonal';

export interface ServiceTemplate {
  name: string;
  operators: string;
  line: LineOfBusiness;
  charge: ChargeType;
  description: string;
}

export const SERVICE_TEMPLATES: readonly ServiceTemplate[] = [
  {
    name: 'Parking lot plowing',
    operators: 'Plow lot',
    line: 'snow',
    charge: 'per_push',
    description: 'Plowing of drive lanes and parking stalls at each 5 cm (2 in) trigger.',
  },
  {
    name: 'Sidewalk shoveling',
    operators: 'Shovel walks',
    line: 'snow',
    charge: 'per_visit',
    description: 'Hand clearing of sidewalks, ramps and entrances.',
  },
  {
    name: 'Parking lot salting',
    operators: 'Salt lot',
    line: 'snow',
    charge: 'per_visit',
    description: 'Rock salt application on drive lanes and stalls.',
  },
  {
    name: 'Sidewalk de-icing',
    operators: 'Ice melt walks',
    line: 'snow',
    charge: 'per_visit',
    description: 'Pet-safe ice melt on walkways and steps.',
  },
  {
    name: 'Anti-icing pre-treatment',
    operators: 'Brine',
    line: 'snow',
    charge: 'per_visit',
    description: 'Liquid brine applied before a forecast storm.',
  },
  {
    name: 'Snow relocation',
    operators: 'Haul snow',
    line: 'snow',
    charge: 'hourly',
    description: 'Loader and truck time to stack or haul snow off site.',
  },
  {
    name: 'Seasonal snow contract',
    operators: 'Seasonal',
    line: 'snow',
    charge: 'seasonal',
    description: 'All plowing and salting for the season, unlimited events.',
  },
  {
    name: 'Roof snow removal',
    operators: 'Roof',
    line: 'snow',
    charge: 'hourly',
    description: 'Crew with harnesses clearing flat roofs above load limits.',
  },
  {
    name: 'Lawn mowing',
    operators: 'Mow',
    line: 'landscaping',
    charge: 'per_visit',
    description: 'Mowing, trimming and blowing of hard surfaces.',
  },
  {
    name: 'Hedge trimming',
    operators: 'Hedges',
    line: 'landscaping',
    charge: 'hourly',
    description: 'Shaping of hedges and shrubs.',
  },
  {
    name: 'Spring cleanup',
    operators: 'Spring CU',
    line: 'landscaping',
    charge: 'per_visit',
    description: 'Removal of winter debris, edging and first cut.',
  },
  {
    name: 'Fall leaf cleanup',
    operators: 'Leaves',
    line: 'landscaping',
    charge: 'per_visit',
    description: 'Leaf collection and disposal.',
  },
  {
    name: 'Mulch installation',
    operators: 'Mulch',
    line: 'landscaping',
    charge: 'hourly',
    description: 'Bed edging and mulch top-up.',
  },
  {
    name: 'Core aeration',
    operators: 'Aerate',
    line: 'landscaping',
    charge: 'per_visit',
    description: 'Core aeration of turf areas.',
  },
  {
    name: 'Seasonal grounds maintenance',
    operators: 'Grounds',
    line: 'landscaping',
    charge: 'seasonal',
    description: 'Weekly mowing and bed care April to October.',
  },
  {
    name: 'Irrigation start-up',
    operators: 'Irrigation',
    line: 'landscaping',
    charge: 'per_visit',
    description: 'Spring start-up and zone check of the irrigation system.',
  },
];

/** Whole-unit rate ranges per charge type (client side). */
export const RATE_RANGES: Record<ChargeType, readonly [number, number]> = {
  hourly: [45, 185],
  per_visit: [35, 450],
  per_push: [60, 650],
  seasonal: [1500, 28000],
};

export interface CategoryTemplate {
  name: string;
  group: string;
  line: LineOfBusiness;
  /** hourly client rate range, whole units */
  rate: readonly [number, number];
  /** examples of units, for equipment names */
  models: readonly string[];
}

export const CATEGORY_TEMPLATES: readonly CategoryTemplate[] = [
  {
    name: 'Plow trucks',
    group: 'vehicles',
    line: 'snow',
    rate: [95, 160],
    models: [
      'Ford F-550 w/ Boss V-plow',
      'Ram 5500 w/ Western Wideout',
      'Chevrolet Silverado 3500HD w/ Fisher XLS',
    ],
  },
  {
    name: 'Skid steers',
    group: 'loaders',
    line: 'snow',
    rate: [85, 140],
    models: ['Bobcat S650', 'Cat 262D3', 'Kubota SSV75'],
  },
  {
    name: 'Wheel loaders',
    group: 'loaders',
    line: 'snow',
    rate: [150, 260],
    models: ['Cat 926M', 'John Deere 544 P', 'Volvo L60H'],
  },
  {
    name: 'Tailgate spreaders',
    group: 'spreaders',
    line: 'snow',
    rate: [40, 75],
    models: ['Buyers SaltDogg 1400', 'Snowex 575'],
  },
  {
    name: 'V-box spreaders',
    group: 'spreaders',
    line: 'snow',
    rate: [60, 110],
    models: ['Boss VBX 8000', 'Western Striker'],
  },
  {
    name: 'Walk-behind spreaders',
    group: 'spreaders',
    line: 'snow',
    rate: [15, 30],
    models: ['Earthway 7350SU', 'Snowex SP-85'],
  },
  {
    name: 'Brine sprayers',
    group: 'sprayers',
    line: 'snow',
    rate: [45, 90],
    models: ['Boss Brine 1000', 'Snowex VSS-3000'],
  },
  {
    name: 'Snow blowers',
    group: 'small_engines',
    line: 'snow',
    rate: [20, 45],
    models: ['Honda HSS928', 'Toro Power Max HD 1030'],
  },
  {
    name: 'Sidewalk tractors',
    group: 'vehicles',
    line: 'snow',
    rate: [70, 120],
    models: ['Kubota BX23S w/ broom', 'Holder S 990'],
  },
  {
    name: 'Zero-turn mowers',
    group: 'mowers',
    line: 'landscaping',
    rate: [45, 85],
    models: ['Exmark Lazer Z', 'Scag Turf Tiger II', 'John Deere Z994R'],
  },
  {
    name: 'Walk-behind mowers',
    group: 'mowers',
    line: 'landscaping',
    rate: [20, 40],
    models: ['Honda HRX217', 'Toro TimeMaster 30'],
  },
  {
    name: 'Leaf blowers',
    group: 'hand_tools',
    line: 'landscaping',
    rate: [10, 25],
    models: ['Stihl BR 800', 'Echo PB-9010T'],
  },
  {
    name: 'String trimmers',
    group: 'hand_tools',
    line: 'landscaping',
    rate: [8, 20],
    models: ['Stihl FS 131', 'Husqvarna 525L'],
  },
  {
    name: 'Compact tractors',
    group: 'vehicles',
    line: 'landscaping',
    rate: [60, 110],
    models: ['Kubota L3902', 'John Deere 3038E'],
  },
  {
    name: 'Core aerators',
    group: 'turf_care',
    line: 'landscaping',
    rate: [35, 70],
    models: ['Ryan Lawnaire 28', 'Billy Goat PL2501'],
  },
  {
    name: 'Pickup trucks',
    group: 'vehicles',
    line: 'landscaping',
    rate: [50, 95],
    models: ['Ford F-250', 'Toyota Tundra', 'GMC Sierra 2500'],
  },
];

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
