import { useEffect, useState } from 'preact/hooks';

/** A value components can follow (a tiny store; Preact's own signals package would be one more dependency). */
export function signal<T>(initial: T) {
  let value = initial;
  const listeners = new Set<(v: T) => void>();
  return {
    get: () => value,
    set(next: T) {
      value = next;
      for (const l of listeners) l(next);
    },
    use(): T {
      const [v, setV] = useState(value);
      useEffect(() => {
        listeners.add(setV);
        return () => listeners.delete(setV);
      }, []);
      return v;
    },
  };
}
