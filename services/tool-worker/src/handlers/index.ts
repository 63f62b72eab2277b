import { documentHandlers } from './document.handlers';
import { folderHandlers } from './folder.handlers';
import { goalHandlers } from './goal.handlers';
import { habitHandlers } from './habit.handlers';
import type { ToolHandlers } from './handler';
import { memoryHandlers } from './memory.handlers';
import { reminderHandlers } from './reminder.handlers';

/** Every tool of the catalog with its handler; a missing one is a compile error. */
export const toolHandlers: ToolHandlers = {
  ...folderHandlers,
  ...documentHandlers,
  ...habitHandlers,
  ...reminderHandlers,
  ...goalHandlers,
  ...memoryHandlers,
};

export type { ToolContext, ToolHandler, ToolHandlers } from './handler';
