import { useState } from 'preact/hooks';

/** Copies `text` to the clipboard; says "Copied" for two seconds. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        await navigator.clipboard.writeText(text);
        setDone(true);
        setTimeout(() => setDone(false), 2000);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}
