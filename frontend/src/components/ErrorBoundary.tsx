import { Component, type ErrorInfo, type ReactNode } from "react";

interface Props {
  children: ReactNode;
  /** What failed, as the heading says it: "This page" unless a panel names itself. */
  what?: string;
}

interface State {
  error: Error | null;
}

/** Keeps one broken page (or panel) from blanking the whole UI, and says what broke. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error("UI error", error, info.componentStack);
  }

  override render(): ReactNode {
    if (this.state.error !== null) {
      return (
        <div className="error" role="alert">
          <h2>{this.props.what ?? "This page"} failed to render</h2>
          <pre>{this.state.error.message}</pre>
          <button
            type="button"
            onClick={() => {
              this.setState({ error: null });
            }}
          >
            Try again
          </button>
        </div>
      );
    }
    return this.props.children;
  }
}
