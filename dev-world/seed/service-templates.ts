// What snow-and-ice and landscaping companies sell. Rates are in whole units of the company's
// currency; the generator varies them per company.

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
