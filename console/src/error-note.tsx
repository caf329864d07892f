/** A failure the person should read: announced to screen readers, nothing when there is none. */
export function ErrorNote({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}
