import type { McpToolEntry } from '../mcp/mcp-catalog';
import { describeCall, offeredTools, toolsForModel } from './tool-directory';
import { modelTools } from './index';

const entry = (tool: string, readOnly: boolean): McpToolEntry => ({
  name: `notes__${tool}`,
  server: 'notes',
  tool,
  description: `The ${tool} tool.`,
  parameters: { type: 'object', properties: {} },
  readOnly,
  idempotent: readOnly,
});
const mcp = [entry('get_note', true), entry('create_note', false)];
const utc = { timeZone: 'UTC' };

describe('the tool directory', () => {
  it('lists built-in tools first, then MCP tools, with whether they change data and their source', () => {
    const tools = offeredTools(mcp);
    expect(tools.slice(0, modelTools.length).every((tool) => tool.source === 'builtin')).toBe(true);
    expect(tools.find((tool) => tool.name === 'create_folder')?.mutates).toBe(true);
    expect(tools.find((tool) => tool.name === 'list_habits')?.mutates).toBe(false);
    expect(tools.slice(modelTools.length)).toEqual([
      expect.objectContaining({ name: 'notes__get_note', mutates: false, source: 'notes' }),
      expect.objectContaining({ name: 'notes__create_note', mutates: true, source: 'notes' }),
    ]);
    expect(toolsForModel(mcp).map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
  });

  it('asks approval for MCP tools unless they are read-only, and for tools of servers not connected yet', () => {
    expect(describeCall('notes__get_note', {}, mcp, utc)).toEqual({ description: 'Call get_note (notes)', mutates: false });
    expect(describeCall('notes__create_note', {}, mcp, utc).mutates).toBe(true);
    expect(describeCall('later__anything', {}, mcp, utc).mutates).toBe(true);
    expect(describeCall('no_such_tool', {}, mcp, utc).mutates).toBe(false);
    expect(describeCall('create_folder', { name: 'Work' }, mcp, utc)).toEqual({ description: 'Create folder "Work"', mutates: true });
    // A null optional argument is left out, as the tool worker takes it.
    expect(describeCall('create_folder', { name: 'Work', parent_folder_id: null }, mcp, utc).description).toBe('Create folder "Work"');
    // Arguments the tool's schema refuses never run: the tool worker answers them at once, with no approval to wait for.
    expect(describeCall('create_folder', { name: '   ' }, mcp, utc)).toEqual({ description: 'Call create_folder', mutates: false });
    expect(describeCall('create_goal', { title: 'Run', target_date: 'tomorrow' }, mcp, utc).mutates).toBe(false);
    // Nor do calls naming an entity by UUID (a user may paste one from the API): only refs and names are taken.
    const uuid = '3F2504E0-4F89-11D3-9A0C-0305E82C3301';
    expect(describeCall('delete_folder', { folder_id: uuid }, mcp, utc)).toEqual({
      description: 'Delete folder "[hidden id]"',
      mutates: false,
    });
    expect(describeCall('move_document', { document_id: 'Plan', folder_id: `folder ${uuid}` }, mcp, utc).mutates).toBe(false);
    expect(describeCall('update_goal', { goal_id: 'Run', habit_id: '[hidden id]' }, mcp, utc).mutates).toBe(false);
    expect(describeCall('create_document', { title: `Invoice ${uuid}` }, mcp, utc).mutates).toBe(true);
  });

  it("shows a reminder's time on the user's clock, with or without the offset the model gave", () => {
    const saoPaulo = { timeZone: 'America/Sao_Paulo' };
    const create = { text: 'Call mom', at: '2026-12-01T14:00:00Z', repeat: 'daily' };
    expect(describeCall('create_reminder', create, [], saoPaulo).description).toBe(
      'Create reminder "Call mom" at 2026-12-01 11:00 (America/Sao_Paulo), daily',
    );
    expect(describeCall('update_reminder', { reminder_id: 'reminder_1', at: '2026-12-01 09:30' }, [], saoPaulo).description).toBe(
      'Update reminder "reminder_1" to 2026-12-01 09:30 (America/Sao_Paulo)',
    );
    // A time the spring-forward change skips shows when it fires.
    const gap = { text: 'Gap', at: '2027-03-14T02:30' };
    expect(describeCall('create_reminder', gap, [], { timeZone: 'America/New_York' }).description).toBe(
      'Create reminder "Gap" at 2027-03-14 03:30 (America/New_York)',
    );
  });
});
