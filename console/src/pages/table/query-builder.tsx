import { ErrorNote } from '../../error-note.tsx';
import { useState } from 'preact/hooks';
import { CELL_STATUSES, FILTER_OPERATORS } from '../../api-enums.ts';
import type { Schema } from '../../api-shapes.ts';

/**
 * The filter and sort builders of the table: they edit exactly what GET …/rows takes —
 * `filter_groups` (groups of rules, nested groups, value or status filters, the 14 operators) and
 * `sort_rules` — so what the grid shows is what the API answers for the same query.
 */

type Operator = Schema<'FilterRule'>['operator'];
/** How people read each operator: an operator the API adds fails the type check until it has its words here. */
const OPERATOR_LABELS = {
  eq: 'is',
  neq: 'is not',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  ends_with: 'ends with',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  is_empty: 'is empty',
  is_not_empty: 'is not empty',
  in: 'is one of',
  not_in: 'is none of',
} as const satisfies Record<Operator, string>;
/** The operators in the API's order (its document's enum), each with its label. */
export const OPERATORS = FILTER_OPERATORS.map((op) => [op, OPERATOR_LABELS[op]] as const);
const NO_VALUE: Operator[] = ['is_empty', 'is_not_empty'];
const LIST: Operator[] = ['in', 'not_in'];
/** A tool cell's statuses (`default` is an input cell's). */
const STATUSES = CELL_STATUSES.filter((s) => s !== 'default');

export type QueryColumn = Pick<Schema<'Column'>, 'col_id' | 'name' | 'type'>;
export type Rule = Schema<'FilterRule'>;
export type Group = Schema<'FilterGroup'>;
/** A sort rule as the console says it: always with its direction and whether it sorts as numbers. */
export type SortRule = Required<Schema<'SortRule'>>;

const isGroup = (r: Rule | Group): r is Group => 'rules' in r;

function RuleEditor(props: { rule: Rule; columns: QueryColumn[]; path: string; onChange(r: Rule): void; onRemove(): void }) {
  const { rule, columns, path } = props;
  const column = columns.find((c) => c.col_id === rule.col_id);
  const field = rule.field ?? 'value';
  const set = (patch: Partial<Rule>) => props.onChange({ ...rule, ...patch });
  const valueText = Array.isArray(rule.value) ? rule.value.join(', ') : String(rule.value ?? '');
  return (
    <fieldset class="rule" aria-label={`Rule ${path}`}>
      <select
        aria-label={`Column of rule ${path}`}
        value={rule.col_id}
        onChange={(e) => set({ col_id: (e.target as HTMLSelectElement).value, field: 'value' })}
      >
        {columns.map((c) => (
          <option key={c.col_id} value={c.col_id}>
            {c.name}
          </option>
        ))}
      </select>
      {column?.type === 'tool' && (
        <select
          aria-label={`Value or status of rule ${path}`}
          value={field}
          onChange={(e) => set({ field: (e.target as HTMLSelectElement).value as 'value' | 'status' })}
        >
          <option value="value">value</option>
          <option value="status">status</option>
        </select>
      )}
      <select
        aria-label={`Operator of rule ${path}`}
        value={rule.operator}
        onChange={(e) => set({ operator: (e.target as HTMLSelectElement).value as Operator })}
      >
        {OPERATORS.map(([op, label]) => (
          <option key={op} value={op}>
            {label}
          </option>
        ))}
      </select>
      {!NO_VALUE.includes(rule.operator) &&
        (field === 'status' && !LIST.includes(rule.operator) ? (
          <select
            aria-label={`Status of rule ${path}`}
            value={String(rule.value ?? 'completed')}
            onChange={(e) => set({ value: (e.target as HTMLSelectElement).value })}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        ) : (
          <input
            aria-label={`Value of rule ${path}${LIST.includes(rule.operator) ? ' (comma-separated)' : ''}`}
            value={valueText}
            onInput={(e) => {
              const text = (e.target as HTMLInputElement).value;
              set({
                value: LIST.includes(rule.operator)
                  ? text
                      .split(',')
                      .map((s) => s.trim())
                      .filter(Boolean)
                  : text,
              });
            }}
          />
        ))}
      <button type="button" class="link" aria-label={`Remove rule ${path}`} onClick={props.onRemove}>
        Remove
      </button>
    </fieldset>
  );
}

function GroupEditor(props: { group: Group; columns: QueryColumn[]; path: string; onChange(g: Group): void; onRemove?: () => void }) {
  const { group, columns, path } = props;
  const replace = (i: number, r: Rule | Group) => props.onChange({ ...group, rules: group.rules.map((x, k) => (k === i ? r : x)) });
  const remove = (i: number) => props.onChange({ ...group, rules: group.rules.filter((_, k) => k !== i) });
  const first = columns[0]?.col_id ?? '';
  return (
    <fieldset class="group">
      <legend>
        <label>
          Match{' '}
          <select
            aria-label={`Match of group ${path}`}
            value={group.type}
            onChange={(e) => props.onChange({ ...group, type: (e.target as HTMLSelectElement).value as 'and' | 'or' })}
          >
            <option value="and">all rules</option>
            <option value="or">any rule</option>
          </select>
        </label>
        {props.onRemove && (
          <button type="button" class="link" aria-label={`Remove group ${path}`} onClick={props.onRemove}>
            Remove group
          </button>
        )}
      </legend>
      {group.rules.map((r, i) =>
        isGroup(r) ? (
          <GroupEditor
            key={i}
            group={r}
            columns={columns}
            path={`${path}.${i + 1}`}
            onChange={(g) => replace(i, g)}
            onRemove={() => remove(i)}
          />
        ) : (
          <RuleEditor
            key={i}
            rule={r}
            columns={columns}
            path={`${path}.${i + 1}`}
            onChange={(x) => replace(i, x)}
            onRemove={() => remove(i)}
          />
        ),
      )}
      <div class="row-actions">
        <button
          type="button"
          aria-label={`Add rule to group ${path}`}
          onClick={() => props.onChange({ ...group, rules: [...group.rules, { col_id: first, operator: 'contains', value: '' }] })}
        >
          Add rule
        </button>
        <button
          type="button"
          aria-label={`Add group to group ${path}`}
          onClick={() => props.onChange({ ...group, rules: [...group.rules, { type: 'and', rules: [] }] })}
        >
          Add group
        </button>
      </div>
    </fieldset>
  );
}

/** The filter and sort of a table, as a form (in the table's side panel); `onApply` gets them as GET …/rows takes them. */
export function QueryBuilder(props: {
  columns: QueryColumn[];
  filter: Group;
  sort: SortRule[];
  error?: string;
  onApply(filter: Group, sort: SortRule[]): void;
}) {
  const [filter, setFilter] = useState<Group>(props.filter);
  const [sort, setSort] = useState<SortRule[]>(props.sort);
  const { columns } = props;
  const setSortAt = (i: number, patch: Partial<SortRule>) => setSort(sort.map((s, k) => (k === i ? { ...s, ...patch } : s)));
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply(filter, sort);
      }}
    >
      <h3>Filter</h3>
      <GroupEditor group={filter} columns={columns} path="1" onChange={setFilter} />
      <fieldset class="group">
        <legend>Sort (first rule first)</legend>
        {sort.map((s, i) => (
          <fieldset class="rule" key={i} aria-label={`Sort rule ${i + 1}`}>
            <select
              aria-label={`Column of sort rule ${i + 1}`}
              value={s.col_id}
              onChange={(e) => setSortAt(i, { col_id: (e.target as HTMLSelectElement).value })}
            >
              {columns.map((c) => (
                <option key={c.col_id} value={c.col_id}>
                  {c.name}
                </option>
              ))}
            </select>
            <select
              aria-label={`Direction of sort rule ${i + 1}`}
              value={s.direction}
              onChange={(e) => setSortAt(i, { direction: (e.target as HTMLSelectElement).value as 'asc' | 'desc' })}
            >
              <option value="asc">ascending</option>
              <option value="desc">descending</option>
            </select>
            <label>
              <input
                type="checkbox"
                checked={s.sort_as_number}
                onChange={(e) => setSortAt(i, { sort_as_number: (e.target as HTMLInputElement).checked })}
              />{' '}
              as numbers
            </label>
            <button
              type="button"
              class="link"
              aria-label={`Remove sort rule ${i + 1}`}
              onClick={() => setSort(sort.filter((_, k) => k !== i))}
            >
              Remove
            </button>
          </fieldset>
        ))}
        <button
          type="button"
          onClick={() => setSort([...sort, { col_id: columns[0]?.col_id ?? '', direction: 'asc', sort_as_number: false }])}
        >
          Add sort
        </button>
      </fieldset>
      <ErrorNote message={props.error} />
      <div class="actions">
        <button type="submit" class="primary">
          Apply
        </button>
        <button
          type="button"
          onClick={() => {
            setFilter({ type: 'and', rules: [] });
            setSort([]);
            props.onApply({ type: 'and', rules: [] }, []);
          }}
        >
          Clear all
        </button>
      </div>
    </form>
  );
}
