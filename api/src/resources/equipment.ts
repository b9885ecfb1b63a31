import { type EquipmentRow, readCategoriesByIds } from '@pda/projections';
import { categoryJson } from './equipment-categories.ts';
import { type Json, type Resource, registered } from './resource.ts';

export const equipment: Resource<'equipment'> = {
  ...registered('equipment'),
  present(handle, rows, include) {
    const categories = include.has('category')
      ? readCategoriesByIds(handle, [...new Set(rows.map((row) => row.category_id))])
      : undefined;
    return rows.map((row) => {
      const json = equipmentJson(row);
      if (categories) {
        // Included but unknown here (deleted, or not projected yet): null, not absent.
        const category = categories.get(row.category_id);
        json.category = category ? categoryJson(category) : null;
      }
      return json;
    });
  },
};

function equipmentJson(row: EquipmentRow): Json {
  return {
    id: row.id,
    name: row.name,
    name_for_operators: row.name_for_operators,
    client_description: row.client_description,
    category_id: row.category_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
