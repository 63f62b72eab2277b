/**
 * A Map holding at most `limit` entries: setting a new key when full drops the oldest one. For
 * the small per-process caches, which must stay bounded however long a process runs.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.limit && !this.has(key)) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
