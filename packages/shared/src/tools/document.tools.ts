import { z } from 'zod';
import { defineTool, displayName, entityReference, quote } from './tool-spec';

export const documentTools = {
  create_document: defineTool({
    description:
      "Create a document, optionally inside a folder and with initial content. The result gives the new document's ref (e.g. document_1).",
    input: z.object({
      title: displayName(255, 'The document title, 1 to 255 characters.'),
      folder_id: entityReference('folder').optional(),
      content: z.string().max(1_000_000).optional().describe('The document text.'),
    }),
    mutates: true,
    describe: (a) => `Create document ${quote(a.title)}${a.folder_id ? ` in ${quote(a.folder_id)}` : ''}`,
  }),
  rename_document: defineTool({
    description: 'Rename an existing document by changing its title.',
    input: z.object({
      document_id: entityReference('document', 'title'),
      new_title: displayName(255, 'The new title, 1 to 255 characters.'),
    }),
    mutates: true,
    describe: (a) => `Rename document ${quote(a.document_id)} to ${quote(a.new_title)}`,
  }),
  move_document: defineTool({
    description: 'Move a document into another folder.',
    input: z.object({
      document_id: entityReference('document', 'title'),
      folder_id: entityReference('folder'),
    }),
    mutates: true,
    describe: (a) => `Move document ${quote(a.document_id)} to ${quote(a.folder_id)}`,
  }),
  delete_document: defineTool({
    description: 'Delete a document.',
    input: z.object({ document_id: entityReference('document', 'title') }),
    mutates: true,
    describe: (a) => `Delete document ${quote(a.document_id)}`,
  }),
  search_documents: defineTool({
    description: "Search the user's documents by words in their title and content. Returns the best matches with refs.",
    // Up to what the search reads (its first words, packages/shared/src/search): a pasted paragraph is a query too.
    input: z.object({
      query: z.string().trim().min(1, 'must not be blank').max(4_000, 'must be at most 4000 characters').describe('What to look for.'),
    }),
    mutates: false,
    describe: (a) => `Search documents for ${quote(a.query)}`,
  }),
};
