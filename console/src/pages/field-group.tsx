import type { ComponentChildren } from 'preact';

/** What a field made of fields is given by the form: where it is, its name, its hint and error. */
export interface GroupProps {
  id: string;
  label: string;
  value: unknown;
  error?: string;
  hint?: string;
}

/** A fieldset for a field made of fields, with its hint and the server's error under the legend. */
export function FieldGroup(props: GroupProps & { class: string; children: ComponentChildren }) {
  const hintId = props.hint ? `${props.id}-hint` : undefined;
  return (
    <fieldset class={`group ${props.class}`} aria-describedby={hintId}>
      <legend>{props.label}</legend>
      {props.hint && (
        <small id={hintId} class="hint">
          {props.hint}
        </small>
      )}
      {props.error && <span class="field-error">{props.error}</span>}
      {props.children}
    </fieldset>
  );
}
