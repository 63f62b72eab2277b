import { documentHandlers } from './document.handlers';
import { folderHandlers } from './folder.handlers';
import type { ToolHandlers } from './handler';

/** Every tool of the catalog with its handler; a missing one is a compile error. */
export const toolHandlers: ToolHandlers = {
  ...folderHandlers,
  ...documentHandlers,
};

export type { ToolContext, ToolHandler, ToolHandlers } from './handler';
