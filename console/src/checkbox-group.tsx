import type { ComponentChildren } from 'preact';

type Props = {
  legend: ComponentChildren;
  /** The inputs' name (one per option, as a form posts a list). */
  name: string;
  options: { value: string; label: ComponentChildren; disabled?: boolean }[];
  checked: string[];
  onToggle: (value: string, on: boolean) => void;
  /** Ids of the hint or error below the options (given as children) that describe the group. */
  describedBy?: string;
  children?: ComponentChildren;
};

/** A fieldset of checkboxes, one per option, with what follows them (a hint, an error). */
export function CheckboxGroup({ legend, name, options, checked, onToggle, describedBy, children }: Props) {
  return (
    <fieldset class="group" aria-describedby={describedBy}>
      <legend>{legend}</legend>
      {options.map((o) => (
        <label key={o.value} class="choice">
          <input
            type="checkbox"
            name={name}
            value={o.value}
            checked={checked.includes(o.value)}
            disabled={o.disabled}
            onChange={(e) => onToggle(o.value, (e.target as HTMLInputElement).checked)}
          />{' '}
          {o.label}
        </label>
      ))}
      {children}
    </fieldset>
  );
}
