import { Link } from "react-router-dom";

export function NotFoundPage() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no page here. Go to the <Link to="/paths">paths</Link>.
      </p>
    </section>
  );
}
