// Small text helpers for generated emails and codes.

/** "Côté Müller" → "cote-mueller": ASCII, lowercase, hyphen-separated. */
export function slug(text: string): string {
  return text
    .replace(/ß/g, 'ss')
    .replace(/[äÄ]/g, 'ae')
    .replace(/[öÖ]/g, 'oe')
    .replace(/[üÜ]/g, 'ue')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** "Plow trucks" → "PT": initials for operator short names. */
export function initials(text: string): string {
  return text
    .split(/[\s-]+/)
    .map((w) => w[0]?.toUpperCase() ?? '')
    .join('');
}

/** "Plow trucks" → "Plow truck", for naming one unit of a category. */
export function singular(text: string): string {
  return text.endsWith('s') ? text.slice(0, -1) : text;
}
