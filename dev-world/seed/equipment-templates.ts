// Equipment categories of snow-and-ice and landscaping fleets, with model names for their units.
import type { LineOfBusiness } from './service-templates.ts';

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
