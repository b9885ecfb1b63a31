// Services, equipment categories, equipment and consumables of one company.

import type { CompanyProfile } from './company-profile.ts';
import { CONSUMABLE_TEMPLATES } from './consumable-templates.ts';
import { CATEGORY_TEMPLATES } from './equipment-templates.ts';
import { rowUuid } from './ids.ts';
import { priceBetween, shareOf } from './money.ts';
import { deriveKey, rowRng } from './prng.ts';
import type { ConsumableRow, EquipmentCategoryRow, EquipmentRow, ServiceRow } from './rows.ts';
import { type ChargeType, RATE_RANGES, SERVICE_TEMPLATES } from './service-templates.ts';
import { initials, singular } from './text.ts';

/** The templates of a company's lines of business, in a stable order. */
function forLines<T extends { line: string }>(all: readonly T[], company: CompanyProfile): T[] {
  return all.filter((t) => (company.lines as readonly string[]).includes(t.line));
}

/** Template `i mod n`; past the list, a zone number keeps names distinct. */
function nth<T>(templates: readonly T[], i: number): { template: T; variant: string } {
  const template = templates[i % templates.length];
  if (template === undefined) throw new Error('no template for this line of business');
  const round = Math.floor(i / templates.length);
  return { template, variant: round === 0 ? '' : ` (zone ${round + 1})` };
}

const MINIMUM_MINUTES: Record<ChargeType, readonly number[]> = {
  hourly: [30, 60, 60, 60, 120],
  per_visit: [0, 0, 0, 15, 30],
  per_push: [0],
  seasonal: [0],
};

export function* generateServices(company: CompanyProfile, count: number): Generator<ServiceRow> {
  const key = deriveKey(company.key, 'services');
  const templates = forLines(SERVICE_TEMPLATES, company);
  for (let i = 0; i < count; i++) {
    const rng = rowRng(key, i);
    const id = rowUuid(company.idSpace, 'services', i);
    const { template, variant } = nth(templates, i);
    const [min, max] = RATE_RANGES[template.charge];
    const clientRate = priceBetween(rng, min, max);
    // Subcontractors are often paid by the hour whatever the client is charged.
    const subCharge: ChargeType = rng.chance(0.3) ? 'hourly' : template.charge;
    const subRate =
      subCharge === template.charge ? shareOf(clientRate, rng, 55, 80) : priceBetween(rng, 35, 95);
    yield {
      id,
      company_id: company.id,
      name: template.name + variant,
      name_for_operators: template.operators + variant,
      client_description: template.description,
      color: rng.hexColor(),
      client_charge_type: template.charge,
      client_rate_amount: clientRate,
      client_rate_currency: company.currency,
      client_minimum_minutes: rng.pick(MINIMUM_MINUTES[template.charge]),
      subcontractor_charge_type: subCharge,
      subcontractor_rate_amount: subRate,
      subcontractor_rate_currency: company.currency,
      subcontractor_minimum_minutes: rng.pick(MINIMUM_MINUTES[subCharge]),
    };
  }
}

export function* generateCategories(company: CompanyProfile, count: number): Generator<EquipmentCategoryRow> {
  const key = deriveKey(company.key, 'equipment_categories');
  const templates = forLines(CATEGORY_TEMPLATES, company);
  for (let i = 0; i < count; i++) {
    const rng = rowRng(key, i);
    const id = rowUuid(company.idSpace, 'equipment_categories', i);
    const { template, variant } = nth(templates, i);
    const clientRate = priceBetween(rng, ...template.rate);
    yield {
      id,
      company_id: company.id,
      name: template.name + variant,
      group_name: template.group,
      default_client_rate_amount: clientRate,
      default_client_rate_currency: company.currency,
      default_subcontractor_rate_amount: shareOf(clientRate, rng, 60, 85),
      default_subcontractor_rate_currency: company.currency,
    };
  }
}

export function* generateEquipment(
  company: CompanyProfile,
  count: number,
  categoryCount: number,
): Generator<EquipmentRow> {
  const key = deriveKey(company.key, 'equipment');
  const templates = forLines(CATEGORY_TEMPLATES, company);
  for (let i = 0; i < count; i++) {
    const rng = rowRng(key, i);
    const id = rowUuid(company.idSpace, 'equipment', i);
    // Round-robin so every category has units; the category id is rebuilt, not remembered.
    const categoryIndex = i % categoryCount;
    const { template, variant } = nth(templates, categoryIndex);
    const unit = Math.floor(i / categoryCount) + 1;
    const model = rng.pick(template.models);
    yield {
      id,
      company_id: company.id,
      category_id: rowUuid(company.idSpace, 'equipment_categories', categoryIndex),
      name: `${singular(template.name)}${variant} #${unit}`,
      name_for_operators: `${initials(template.name)}-${String(unit).padStart(2, '0')}`,
      client_description: rng.chance(0.7) ? model : '',
    };
  }
}

export function* generateConsumables(company: CompanyProfile, count: number): Generator<ConsumableRow> {
  const key = deriveKey(company.key, 'consumables');
  const templates = forLines(CONSUMABLE_TEMPLATES, company);
  for (let i = 0; i < count; i++) {
    const rng = rowRng(key, i);
    const id = rowUuid(company.idSpace, 'consumables', i);
    const { template, variant } = nth(templates, i);
    const clientRate = priceBetween(rng, ...template.rate);
    yield {
      id,
      company_id: company.id,
      name: template.name + variant,
      name_for_operators: template.operators + variant,
      client_description: `Billed per ${template.unit}.`,
      group_name: template.group,
      default_client_rate_amount: clientRate,
      default_client_rate_currency: company.currency,
      default_subcontractor_rate_amount: shareOf(clientRate, rng, 70, 90),
      default_subcontractor_rate_currency: company.currency,
    };
  }
}
