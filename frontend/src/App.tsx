import { Navigate, Route, Routes } from "react-router-dom";

import { AppLayout } from "./components/AppLayout";
import { AgentsPage } from "./pages/AgentsPage";
import { AlertSettingsPage } from "./pages/AlertSettingsPage";
import { AuditPage } from "./pages/AuditPage";
import { GridPage } from "./pages/GridPage";
import { IncidentPage } from "./pages/IncidentPage";
import { FindingsPage } from "./pages/FindingsPage";
import { IncidentsPage } from "./pages/IncidentsPage";
import { LoginPage } from "./pages/LoginPage";
import { MeshEditorPage } from "./pages/MeshEditorPage";
import { MeshesPage } from "./pages/MeshesPage";
import { NotFoundPage } from "./pages/NotFoundPage";
import { PathPage } from "./pages/PathPage";
import { PathsPage } from "./pages/PathsPage";
import { PeoplePage } from "./pages/PeoplePage";
import { SchedulePage } from "./pages/SchedulePage";
import { TokensPage } from "./pages/TokensPage";
import { TargetPage } from "./pages/target/TargetPage";
import { TargetsTable } from "./pages/target/TargetsTable";

export function App() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route element={<AppLayout />}>
        <Route index element={<Navigate to="/paths" replace />} />
        <Route path="/paths" element={<PathsPage externalTargets={<TargetsTable />} />} />
        <Route path="/paths/:source/:destination" element={<PathPage />} />
        <Route path="/targets/:source/:target" element={<TargetPage />} />
        <Route path="/grid" element={<GridPage />} />
        <Route path="/meshes" element={<MeshesPage />} />
        <Route path="/meshes/new" element={<MeshEditorPage />} />
        <Route path="/meshes/:name" element={<MeshEditorPage />} />
        <Route path="/agents" element={<AgentsPage />} />
        <Route path="/schedule" element={<SchedulePage />} />
        <Route path="/findings" element={<FindingsPage />} />
        <Route path="/incidents" element={<IncidentsPage />} />
        <Route path="/incidents/:id" element={<IncidentPage />} />
        <Route path="/alerts/settings" element={<AlertSettingsPage />} />
        <Route path="/people" element={<PeoplePage />} />
        <Route path="/tokens" element={<TokensPage />} />
        <Route path="/audit" element={<AuditPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}
