import { type IsolationLevel, Kysely, type KyselyConfig, type Transaction, type TransactionBuilder } from 'kysely';
import type { DialectErrors } from './dialect.ts';
import { redoing, transactionRedoable } from './redo-policy.ts';

/**
 * Kysely whose `transaction().execute(body)` runs the whole body again (redo-policy.ts) when the
 * database rolled the transaction back for a reason a new run cures: a lost conflict (a deadlock;
 * on Galera a certification failure at commit, which no lock taken inside could have prevented),
 * a node that refused it unrun, a connection that broke before the commit. Every transaction of
 * the storage goes through here, so a body must not keep state outside itself between runs (jobs
 * made for the outbox are remade: core/jobs/job-outbox.ts).
 */
export class RetryingKysely<DB> extends Kysely<DB> {
  constructor(
    config: KyselyConfig,
    private readonly errors: DialectErrors,
  ) {
    super(config);
  }

  override transaction(): TransactionBuilder<DB> {
    return redoingBuilder(super.transaction(), this.errors);
  }
}

function redoingBuilder<DB>(builder: TransactionBuilder<DB>, errors: DialectErrors): TransactionBuilder<DB> {
  const redone = {
    execute: <T>(body: (trx: Transaction<DB>) => Promise<T>) =>
      redoing(
        errors,
        () => builder.execute(body),
        (e) => transactionRedoable(errors, e),
      ),
    setIsolationLevel: (level: IsolationLevel) => redoingBuilder(builder.setIsolationLevel(level), errors),
    setAccessMode: (mode: Parameters<TransactionBuilder<DB>['setAccessMode']>[0]) => redoingBuilder(builder.setAccessMode(mode), errors),
  };
  // TransactionBuilder's state is private to Kysely: this stands in for it with the same three methods.
  return redone as unknown as TransactionBuilder<DB>;
}
