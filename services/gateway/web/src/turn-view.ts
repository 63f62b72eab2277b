import type { TurnEvent } from '@assistant/shared';
import type { Api } from './api.js';
import { button, el, errorText } from './dom.js';
import { TaskRow } from './task-row.js';
import type { Connection, StreamListener } from './turn-stream.js';

const DONE_TEXT = {
  completed: 'Finished',
  limit_reached: 'Stopped at the iteration limit',
  failed: 'Failed',
  cancelled: 'Cancelled',
} as const;

/**
 * One turn as its events arrive: interim text, task lists, approvals and questions appear in
 * the order they happened; the final answer streams in token by token.
 */
export class TurnView implements StreamListener {
  readonly element: HTMLLIElement;
  private readonly status = el('span', { class: 'turn-status', role: 'status' }, 'Queued');
  private readonly link = el('span', { class: 'turn-connection' });
  private readonly problem = el('p', { class: 'error', role: 'alert' });
  private readonly flow = el('div', { class: 'turn-flow' });
  private readonly cancelButton: HTMLButtonElement;
  private readonly tasks = new Map<string, TaskRow>();
  private readonly waitingApprovals = new Set<string>();
  /** Where the next tokens go; a tool step in between starts a new block. */
  private text: HTMLElement | undefined;
  private question: HTMLElement | undefined;

  constructor(
    private readonly api: Api,
    readonly turnId: string,
  ) {
    this.cancelButton = button('Cancel', () => void this.act(() => this.api.post(`/v1/turns/${turnId}/cancel`)), { class: 'cancel' });
    this.element = el(
      'li',
      { class: 'turn', 'data-turn-id': turnId, 'data-status': 'queued' },
      el('div', { class: 'turn-head' }, this.status, this.link, this.cancelButton),
      this.flow,
      this.problem,
    );
  }

  event(event: TurnEvent): void {
    this.element.dataset.lastSeq = String(event.seq);
    switch (event.type) {
      case 'turn_started':
        return this.setStatus('running', 'Working…');
      case 'task_list':
        this.flow.append(el('ul', { class: 'tasks', 'aria-label': 'Planned tasks' }));
        for (const task of event.tasks) this.task(task.id, task.tool_name).describe(task.description);
        return;
      case 'task_update': {
        const row = this.task(event.task_id, '');
        const took = event.duration_ms === undefined ? '' : `${event.duration_ms} ms`;
        row.state(event.status, took);
        if (event.error) row.note(event.error, 'problem');
        return;
      }
      case 'tool_approval_request':
        this.waitingApprovals.add(event.approval_id);
        this.setStatus('awaiting_approval', 'Waiting for your approval');
        return this.task(event.task_id, event.tool_name).askApproval(event.tool_name, event.arguments, async (decision) => {
          await this.api.post(`/v1/approvals/${event.approval_id}`, { decision });
        });
      case 'tool_approved':
      case 'tool_rejected':
        this.task(event.task_id, '').decided(event.type === 'tool_approved');
        this.waitingApprovals.delete(event.approval_id);
        if (this.waitingApprovals.size === 0) this.setStatus('running', 'Working…');
        return;
      case 'tool_start':
        return this.task(event.task_id, event.tool_name).showArguments(event.arguments);
      case 'tool_retry':
        return this.task(event.task_id, event.tool_name).note(
          `That failed (${event.reason}); trying again: attempt ${event.attempt} of ${event.max_attempts}.`,
          'problem',
        );
      case 'tool_timeout':
        return this.task(event.task_id, event.tool_name).note(`Timed out after ${event.timeout_seconds} s.`, 'problem');
      case 'tool_complete':
        return this.task(event.task_id, event.tool_name).showResult(event.result);
      case 'tool_failed':
        return this.task(event.task_id, event.tool_name).note(`Failed: ${event.error}`, 'problem');
      case 'ask_user_continue':
        return this.ask(event.question);
      case 'token':
        this.textBlock().textContent += event.delta;
        return;
      case 'message': {
        const answer = this.textBlock();
        answer.textContent = event.content;
        answer.classList.add('final');
        return;
      }
      case 'iteration_limit':
        this.text = undefined;
        this.flow.append(el('p', { class: 'note' }, `Stopped after ${event.max_iterations} model calls (your max iterations).`));
        return;
      case 'error':
        this.problem.textContent = `Something went wrong: ${event.message}`;
        return;
      case 'done':
        this.question?.remove();
        this.cancelButton.remove();
        return this.setStatus(event.status, DONE_TEXT[event.status]);
    }
  }

  connection(state: Connection): void {
    this.element.dataset.connection = state;
    this.link.textContent = state === 'reconnecting' ? 'Connection lost, reconnecting…' : '';
  }

  failed(message: string): void {
    this.problem.textContent = message;
  }

  private setStatus(status: string, text: string): void {
    this.element.dataset.status = status;
    this.status.textContent = text;
  }

  /** The task's row, created in the latest task list (or a new one) when first heard of. */
  private task(id: string, toolName: string): TaskRow {
    let row = this.tasks.get(id);
    if (!row) {
      row = new TaskRow(id);
      const last = this.flow.lastElementChild;
      const list = last instanceof HTMLUListElement ? last : this.flow.appendChild(el('ul', { class: 'tasks', 'aria-label': 'Tasks' }));
      list.append(row.element);
      this.tasks.set(id, row);
    }
    if (toolName) row.named(toolName);
    this.text = undefined;
    return row;
  }

  private textBlock(): HTMLElement {
    this.text ??= this.flow.appendChild(el('div', { class: 'answer' }));
    return this.text;
  }

  private ask(question: string): void {
    this.setStatus('awaiting_user', 'Waiting for your answer');
    this.text = undefined;
    const answer = async (proceed: boolean) => {
      if (await this.act(() => this.api.post(`/v1/turns/${this.turnId}/continue`, { continue: proceed }))) this.question?.remove();
    };
    this.question = el(
      'div',
      { class: 'question', role: 'group', 'aria-label': 'Continue?' },
      el('p', {}, question),
      el(
        'div',
        { class: 'actions' },
        button('Continue', () => void answer(true), { class: 'primary' }),
        button('Stop', () => void answer(false)),
      ),
    );
    this.flow.append(this.question);
  }

  /** Runs a control request; its effect arrives as events, its failure is shown here. */
  private async act(request: () => Promise<unknown>): Promise<boolean> {
    this.problem.textContent = '';
    try {
      await request();
      return true;
    } catch (error) {
      this.problem.textContent = errorText(error);
      return false;
    }
  }
}
