import type { ComponentChildren, InputHTMLAttributes } from 'preact';

type Props = InputHTMLAttributes & {
  id: string;
  label: ComponentChildren;
  /** The field's error from the service; shown under the input and announced with it. */
  error?: string;
  hint: ComponentChildren;
};

/**
 * A labelled input with its hint (`${id}-hint`) and, when there is one, its error (`${id}-error`),
 * both tied to the input by aria-describedby; the other props go to the input.
 */
export function TextField({ id, label, error, hint, ...input }: Props) {
  return (
    <>
      <label for={id}>{label}</label>
      <input {...input} id={id} aria-invalid={Boolean(error)} aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`} />
      {error && (
        <span id={`${id}-error`} class="field-error">
          {error}
        </span>
      )}
      <small id={`${id}-hint`} class="hint">
        {hint}
      </small>
    </>
  );
}
