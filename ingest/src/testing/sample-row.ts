/**
 * Deterministic, plausible logical rows for every captured table (tests and benchmark), with the
 * value kinds that stress the decoder: negative and large decimals, 0–6 fractional digits, arrays.
 */
import type { SourceTable } from '@pda/projections/model';
import { SOURCE_COLUMNS } from './source-columns.ts';

/** A uuid derived from a number (stable across runs). */
export function uuidFor(n: number, salt = 0): string {
  const hex = (BigInt(n) * 2654435761n + BigInt(salt) * 97n).toString(16).padStart(32, '0').slice(-32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function decimal(n: number, scale: number): string {
  const unscaled = BigInt(((n * 7919) % 1_000_000_00) - (n % 3 === 0 ? 12_345 : 0));
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
}

function timestamp(n: number): string {
  const base = Date.UTC(2025, 0, 1) + n * 61_001;
  const iso = new Date(base).toISOString().slice(0, 19);
  const micros = String((n * 123_457) % 1_000_000).padStart(6, '0');
  const digits = n % 7; // 0..6 fractional digits, as Debezium trims trailing zeros
  return digits === 0 ? `${iso}Z` : `${iso}.${micros.slice(0, digits)}Z`;
}

function textValue(name: string, n: number): string {
  if (name.endsWith('currency')) return n % 2 === 0 ? 'USD' : 'CAD';
  if (name === 'country') return 'US';
  if (name === 'color') return '#1f77b4';
  if (name === 'prefix') return 'svc_pk_';
  if (name === 'last_four') return String(1000 + (n % 9000));
  if (name === 'key_sha256') return n.toString(16).padStart(64, '0');
  return `${name} ${n} ‘Schnee & Eis’`;
}

export function sampleRow(table: SourceTable, n: number, companyId: string): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const col of SOURCE_COLUMNS[table]) {
    if (col.optional && n % 5 === 0) {
      row[col.name] = null;
      continue;
    }
    switch (col.kind) {
      case 'uuid':
        row[col.name] = col.name === 'company_id' ? companyId : uuidFor(n, col.name.length);
        break;
      case 'int':
        row[col.name] = (n * 15) % 240;
        break;
      case 'decimal':
        row[col.name] = decimal(n, col.scale ?? 0);
        break;
      case 'timestamptz':
        row[col.name] = timestamp(n);
        break;
      case 'text[]':
        row[col.name] = ['sites:read', 'services:read'];
        break;
      default:
        row[col.name] = textValue(col.name, n);
    }
  }
  if (table === 'companies') row.id = companyId;
  return row;
}
