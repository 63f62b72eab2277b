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
    expect(describeCall('notes__get_note', {}, mcp)).toEqual({ description: 'Call get_note (notes)', mutates: false });
    expect(describeCall('notes__create_note', {}, mcp).mutates).toBe(true);
    expect(describeCall('later__anything', {}, mcp).mutates).toBe(true);
    expect(describeCall('no_such_tool', {}, mcp).mutates).toBe(false);
    expect(describeCall('create_folder', { name: 'Work' }, mcp)).toEqual({ description: 'Create folder "Work"', mutates: true });
    // A null optional argument is left out, as the tool worker takes it.
    expect(describeCall('create_folder', { name: 'Work', parent_folder_id: null }, mcp).description).toBe('Create folder "Work"');
    // Arguments the tool's schema refuses never run: the tool worker answers them at once, with no approval to wait for.
    expect(describeCall('create_folder', { name: '   ' }, mcp)).toEqual({ description: 'Call create_folder', mutates: false });
    expect(describeCall('create_goal', { title: 'Run', target_date: 'tomorrow' }, mcp).mutates).toBe(false);
  });
});
