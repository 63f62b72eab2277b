import { z } from 'zod';
import { defineTool, displayName, entityReference, quote } from './tool-spec';

/** "true" and "false" as text, in any case, as their booleans: some models write their booleans so. */
function booleanText(value: unknown): unknown {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  return text === 'true' ? true : text === 'false' ? false : value;
}

export const folderTools = {
  create_folder: defineTool({
    description:
      "Create a folder for documents. Optionally inside another folder. The result gives the new folder's ref (e.g. folder_1); use that ref in later calls.",
    input: z.object({
      name: displayName(100, 'The folder name, 1 to 100 characters.'),
      parent_folder_id: entityReference('folder').optional(),
    }),
    mutates: true,
    describe: (a) => `Create folder ${quote(a.name)}${a.parent_folder_id ? ` in ${quote(a.parent_folder_id)}` : ''}`,
  }),
  rename_folder: defineTool({
    description: 'Rename an existing folder.',
    input: z.object({
      folder_id: entityReference('folder'),
      new_name: displayName(100, 'The new name, 1 to 100 characters.'),
    }),
    mutates: true,
    describe: (a) => `Rename folder ${quote(a.folder_id)} to ${quote(a.new_name)}`,
  }),
  delete_folder: defineTool({
    description: 'Delete a folder together with its subfolders and the documents inside them.',
    input: z.object({ folder_id: entityReference('folder') }),
    mutates: true,
    describe: (a) => `Delete folder ${quote(a.folder_id)}`,
  }),
  get_folder_contents: defineTool({
    description: 'List the documents and subfolders inside a folder, with their refs.',
    input: z.object({
      folder_id: entityReference('folder'),
      include_subfolders: z.preprocess(booleanText, z.boolean()).optional().describe('Whether to list subfolders too (default: true).'),
    }),
    mutates: false,
    describe: (a) => `List folder ${quote(a.folder_id)}`,
  }),
};
