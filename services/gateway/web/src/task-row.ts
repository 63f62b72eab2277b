import { button, el, errorText, readable } from './dom.js';

export type TaskState = 'pending' | 'awaiting_approval' | 'approved' | 'in_progress' | 'completed' | 'failed' | 'skipped';

const STATE_TEXT: Record<TaskState, string> = {
  pending: 'Planned',
  awaiting_approval: 'Needs your approval',
  approved: 'Approved',
  in_progress: 'Running',
  completed: 'Done',
  failed: 'Failed',
  skipped: 'Skipped',
};

export type Decide = (decision: 'approve' | 'reject') => Promise<void>;

/** One tool call of a turn: its status, arguments, result, retries and approval. */
export class TaskRow {
  readonly element: HTMLLIElement;
  private readonly badge = el('span', { class: 'badge' });
  private readonly description = el('p', { class: 'task-description' });
  private readonly notes = el('ul', { class: 'task-notes' });
  private readonly args = el('pre');
  private readonly result = el('pre');
  private readonly argsBox = el('details', { class: 'task-arguments', hidden: '' }, el('summary', {}, 'Arguments'), this.args);
  private readonly resultBox = el('details', { class: 'task-result', hidden: '' }, el('summary', {}, 'Result'), this.result);
  private readonly name: HTMLElement;
  private approval: HTMLElement | undefined;

  constructor(readonly id: string) {
    // Until an event names the tool (a lone task's first event is its task_update).
    this.name = el('code', { class: 'task-tool' }, id);
    this.element = el(
      'li',
      { class: 'task', 'data-task-id': id },
      el('div', { class: 'task-head' }, this.name, this.badge),
      this.description,
      this.notes,
      this.argsBox,
      this.resultBox,
    );
    this.state('pending');
  }

  state(state: TaskState, detail = ''): void {
    // Skipped, expired or cancelled while waiting: the buttons would answer nothing.
    if (state !== 'awaiting_approval') this.closeApproval();
    this.element.dataset.status = state;
    this.badge.textContent = detail ? `${STATE_TEXT[state]} · ${detail}` : STATE_TEXT[state];
  }

  get current(): TaskState {
    return (this.element.dataset.status ?? 'pending') as TaskState;
  }

  named(toolName: string): void {
    this.name.textContent = toolName;
  }

  describe(text: string): void {
    this.description.textContent = text;
  }

  showArguments(args: Record<string, unknown>): void {
    this.args.textContent = readable(args);
    this.argsBox.hidden = false;
  }

  showResult(text: string): void {
    this.result.textContent = readable(text);
    this.resultBox.hidden = false;
  }

  note(text: string, kind: 'info' | 'problem' = 'info'): void {
    this.notes.append(el('li', { class: `note ${kind}` }, text));
  }

  /** Approve / reject buttons; they stay until the decision comes back as an event. */
  askApproval(toolName: string, args: Record<string, unknown>, decide: Decide): void {
    this.showArguments(args);
    this.argsBox.open = true;
    const message = el('p', { class: 'approval-error', role: 'alert' });
    const choose = async (decision: 'approve' | 'reject') => {
      for (const choice of [approve, reject]) choice.disabled = true;
      message.textContent = '';
      try {
        await decide(decision);
      } catch (error) {
        message.textContent = errorText(error);
        for (const choice of [approve, reject]) choice.disabled = false;
      }
    };
    const approve = button('Approve', () => void choose('approve'), { class: 'primary approve' });
    const reject = button('Reject', () => void choose('reject'), { class: 'reject' });
    this.closeApproval();
    this.approval = el(
      'div',
      { class: 'approval', role: 'group', 'aria-label': `Approve ${toolName}?` },
      el('p', {}, `The assistant wants to run `, el('code', {}, toolName), ' and change your data.'),
      el('div', { class: 'actions' }, approve, reject),
      message,
    );
    this.description.after(this.approval);
    this.state('awaiting_approval');
  }

  decided(approved: boolean): void {
    if (approved) this.state('approved');
    else this.note('You rejected this; it was skipped.');
  }

  private closeApproval(): void {
    this.approval?.remove();
    this.approval = undefined;
  }
}
