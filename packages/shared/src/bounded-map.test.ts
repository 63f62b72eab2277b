import { BoundedMap } from './bounded-map';

describe('BoundedMap', () => {
  it('drops the oldest entry when a new key would pass the limit, and keeps a replaced key in place', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2);
    map.set('a', 10); // replaced, not new: nothing dropped
    expect([...map]).toEqual([
      ['a', 10],
      ['b', 2],
    ]);
    map.set('c', 3);
    expect([...map.keys()]).toEqual(['b', 'c']);
  });
});
