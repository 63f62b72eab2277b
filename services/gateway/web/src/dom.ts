type Child = Node | string | null | undefined | false;

/** Creates an element; text always goes in as text, never as HTML. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) if (child) element.append(child);
  return element;
}

export function button(label: string, onClick: (event: MouseEvent) => void, attributes: Record<string, string> = {}): HTMLButtonElement {
  const element = el('button', { type: 'button', ...attributes }, label);
  element.addEventListener('click', onClick);
  return element;
}

/** Finds an element the page must have. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return element as T;
}

/** Pretty JSON when the text is JSON, the text itself otherwise. */
export function readable(value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value, null, 2);
  try {
    return JSON.stringify(JSON.parse(value), null, 2);
  } catch {
    return value;
  }
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
