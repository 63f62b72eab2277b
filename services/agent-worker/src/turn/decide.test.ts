import { decide } from './decide';
import type { TaskRow, TurnRow, TurnState } from '@assistant/shared';

const turn = (overrides: Partial<TurnRow> = {}): TurnRow => ({
  id: 't',
  user_id: 'u',
  session_id: 's',
  session_key: 'agent:main:main',
  status: 'running',
  input: 'hi',
  input_count: 1,
  iterations: 1,
  max_iterations: 15,
  autonomous: false,
  model: null,
  version: 1,
  claim: null,
  origin: null,
  photos: [],
  use_rag: true,
  ...overrides,
});

let position = 0;
const task = (status: TaskRow['status'], overrides: Partial<TaskRow> = {}): TaskRow => {
  position += 1;
  return {
    id: `id${position}`,
    ref: `task_${position}`,
    position,
    iteration: 1,
    call_id: `c${position}`,
    tool_name: 'create_folder',
    arguments: {},
    description: '',
    mutates: true,
    status,
    failure: null,
    asked: false,
    ...overrides,
  };
};

const state = (t: Partial<TurnRow>, tasks: TaskRow[] = []): TurnState => ({ turn: turn(t), tasks, outbox: [] });

describe('decide', () => {
  it.each(['queued', 'awaiting_approval', 'awaiting_user', 'completed', 'cancelled'] as const)('waits while the turn is %s', (status) => {
    expect(decide(state({ status }), 'job')).toEqual({ kind: 'wait' });
  });

  it('calls the model when no task is open', () => {
    expect(decide(state({}), 'job')).toEqual({ kind: 'call-model' });
    expect(decide(state({}, [task('completed'), task('skipped'), task('failed')]), 'job')).toEqual({ kind: 'call-model' });
  });

  it("resumes its own model call and leaves another job's alone", () => {
    expect(decide(state({ claim: 'job' }), 'job')).toEqual({ kind: 'call-model' });
    expect(decide(state({ claim: 'other' }), 'job')).toEqual({ kind: 'wait' });
  });

  it('runs tasks one at a time, in order', () => {
    const first = task('pending');
    expect(decide(state({}, [first, task('pending')]), 'job')).toEqual({ kind: 'dispatch', task: first });
    expect(decide(state({}, [task('in_progress'), task('pending')]), 'job')).toEqual({ kind: 'wait' });
  });

  it('runs read-only and approved tasks while others wait for approval, then waits itself', () => {
    const readOnly = task('pending', { mutates: false });
    expect(decide(state({}, [task('awaiting_approval'), readOnly]), 'job')).toEqual({ kind: 'dispatch', task: readOnly });
    const approved = task('approved');
    expect(decide(state({}, [approved, task('awaiting_approval')]), 'job')).toEqual({ kind: 'dispatch', task: approved });
    expect(decide(state({}, [task('awaiting_approval'), task('completed')]), 'job')).toEqual({ kind: 'await-approval' });
  });

  it('asks the user after a failure in autonomous mode, once', () => {
    const remaining = task('pending');
    expect(decide(state({ autonomous: true }, [task('failed', { failure: 'error' }), remaining]), 'job')).toEqual({
      kind: 'ask-user',
      remaining: [remaining],
    });
    const asked = task('failed', { failure: 'error', asked: true });
    expect(decide(state({ autonomous: true }, [asked, remaining]), 'job')).toEqual({ kind: 'dispatch', task: remaining });
  });

  it('does not ask about arguments the model got wrong, nor in manual mode', () => {
    expect(decide(state({ autonomous: true }, [task('failed', { failure: 'invalid' })]), 'job')).toEqual({ kind: 'call-model' });
    expect(decide(state({ autonomous: false }, [task('failed', { failure: 'error' })]), 'job')).toEqual({ kind: 'call-model' });
  });
});
