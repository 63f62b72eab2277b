/**
 * The kinds of entity the model can address, with where their rows live. `key` is the column
 * holding the case- and accent-folded name that names are matched against.
 */
export const ENTITY_TABLES = {
  folder: { table: 'folders', label: 'name', key: 'name_key', noun: 'folder' },
  document: { table: 'documents', label: 'title', key: 'title_key', noun: 'document' },
  habit: { table: 'habits', label: 'name', key: 'name_key', noun: 'habit' },
  reminder: { table: 'reminders', label: 'text', key: 'text_key', noun: 'reminder' },
  goal: { table: 'goals', label: 'title', key: 'title_key', noun: 'goal' },
} as const;

export type Entity = keyof typeof ENTITY_TABLES;

export function isEntity(value: string): value is Entity {
  return Object.hasOwn(ENTITY_TABLES, value);
}
